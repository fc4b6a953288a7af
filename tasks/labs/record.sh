#!/bin/sh
# Re-record the bundled live-lab tasks (tasks/labs/recorded/) from tasks/labs/triangle.yaml, as root.
# Each line brings the lab up, injects the fault(s), records tasks/labs/plan.yaml and takes it down;
# the statements of the bundled tasks were then written by hand (a re-recording resets them to the
# draft placeholder: keep the old ones with git).
set -eu
cd "$(dirname "$0")/../.."
lab=tasks/labs/triangle.yaml
set_="--tasks tasks/labs/recorded"
cap() { id=$1; shift; ctb-author $set_ lab capture $lab --commands tasks/labs/plan.yaml --no-commit --task "$id" "$@"; }
cap RCA-LAB-001 --fault shutdown device=R2 interface=eth2
cap RCA-LAB-002 --fault mtu device=R1 interface=eth1 mtu=1400
cap RCA-LAB-003 --fault ospf-area device=R1 network=10.0.12.0/30 area=1
cap RCA-LAB-004 --fault bgp-as device=R3 local_as=65003 neighbor=10.0.23.1 remote_as=65099
cap RCA-LAB-005 --fault static-missing device=H1
cap RCA-LAB-006 --fault shutdown device=R1 interface=eth1
cap RCA-LAB-007 --fault bgp-as device=R2 local_as=65002 neighbor=10.0.23.2 remote_as=65033 --fault static-missing device=H3
cap RCA-LAB-008 --fault mtu device=R2 interface=eth1 mtu=1400
# Path tasks: the gold path is what the live routing tables give (show ip route / ip route get).
cap PATH-LAB-001 --path H1:192.168.3.10
cap PATH-LAB-002 --path H3:192.168.1.10
cap PATH-LAB-003 --path R1:192.168.3.10
cap PATH-LAB-004 --path H3:10.0.12.1
cap RCA-LAB-009 --fault ospf-timers device=R1 interface=eth1 hello=3
cap RCA-LAB-010 --fault prefix-deny device=R3 local_as=65003 neighbor=10.0.23.1 prefix=192.168.1.0/24
cap RCA-LAB-011 --fault static-wrong device=H1 via=192.168.1.99
cap RCA-LAB-012 --fault bgp-neighbor device=R3 local_as=65003 neighbor=10.0.23.1 wrong=10.0.23.5
cap RCA-LAB-013 --fault acl-drop device=H3 source=192.168.1.0/24
# The five-router lab (tasks/labs/edge.yaml): FRR routers beside a Linux firewall in the path.
edge() { id=$1; shift; ctb-author $set_ lab capture tasks/labs/edge.yaml --commands tasks/labs/plan-edge.yaml --no-commit --task "$id" "$@"; }
edge RCA-LAB-014 --fault acl-drop device=FW1 source=10.0.0.0/16 chain=forward port=179
edge PATH-LAB-005 --path H1:192.168.4.10
edge RCA-LAB-015 --fault static-missing device=FW1 to=192.168.1.0/24
edge PATH-LAB-006 --fault shutdown device=R1 interface=eth1 --path H1:192.168.4.10
