"""The MCP server: one replay session exposed as three tools, over stdio or streamable HTTP.

Tools (short snake_case names, as agent CLIs list them next to their own):

- ``list_devices`` — the devices the agent may log into, with vendor, OS, type, role and site;
- ``run_command(device, command)`` — the device's answer, exactly as the device prints it;
- ``submit_answer(answer)`` — the final answer (the last submission counts).

The two query tools are annotated read-only, so headless agent CLIs run them without asking for
approval. A mistake the model can correct (an unknown device, a command the device does not
accept) comes back as a tool error carrying the device's own text; a valid command that was not
recorded is a normal result with the vendor's permission message, as a real device would answer.

Built on the SDK's low-level ``Server`` rather than ``MCPServer``: three fixed tools need no
signature introspection, and an agent loop pays the per-call overhead on every command. What the
tools do lives in :mod:`ctbench.replay.tools`, shared with the OpenAI agent; this module only adds
the MCP descriptions and result type.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from mcp.server import Server, ServerRequestContext
from mcp.types import (
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
    ToolAnnotations,
)

from ctbench.errors import CtbError
from ctbench.replay.mcp_lines import INVALID_REQUEST_TOOL, RepairedStdin, RepairingApp, UnownedTextReader
from ctbench.replay.tools import INPUT_SCHEMAS, ReplayTools, ToolSession

SERVER_NAME = "ctbench-replay"

INSTRUCTIONS = """\
You are logged into the network of a troubleshooting task. The devices answer read-only CLI commands
from output recorded on the real devices. Call list_devices first, then run_command with the vendor's
own syntax (display ... on Huawei and H3C, show ... on Cisco and Juniper; abbreviations and output
filters such as '| include' or '| match' work as on the device). Commands that were not captured are
refused with the device's permission message: try another command. When you know the answer, call
submit_answer with it in the format the task asks for."""

READ_ONLY = ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)
SUBMIT = ToolAnnotations(
    read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)


TOOLS = [
    Tool(
        name="list_devices",
        title="List devices",
        annotations=READ_ONLY,
        input_schema=INPUT_SCHEMAS["list_devices"],
        description="List the network devices you can log into for this task, with vendor, OS, device type, "
        "role and site. Other devices cannot be queried.",
    ),
    Tool(
        name="run_command",
        title="Run a CLI command",
        annotations=READ_ONLY,
        input_schema=INPUT_SCHEMAS["run_command"],
        description="Run one read-only CLI command on one device and get its output as the device prints it. "
        "Use the vendor's syntax (display on Huawei/H3C, show on Cisco/Juniper); abbreviations, "
        "interface short names and output filters ('| include X', '| match X') work as on the "
        "device. Commands that were not captured are refused with the device's permission message.",
    ),
    Tool(
        name="submit_answer",
        title="Submit the final answer",
        annotations=SUBMIT,
        input_schema=INPUT_SCHEMAS["submit_answer"],
        description="Submit your final answer, in the format the task statement asks for (one line per root "
        "cause, or one line per path). A later call replaces the answer.",
    ),
]


def _result(text: str, *, error: bool = False, meta: dict[str, Any] | None = None) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=text)], is_error=error, _meta=meta)


def call_tool_result(tools: ReplayTools, name: str, arguments: Mapping[str, Any] | None) -> CallToolResult:
    """One tool call as MCP returns it. A replay error the model cannot fix by itself (the session
    closed, its call limit, an unwritable answer file) is still only text to an MCP client: it comes
    back as a tool error rather than a protocol failure."""
    try:
        res = tools.call(name, arguments)
    except CtbError as exc:
        return _result(str(exc), error=True)
    return _result(res.text, error=res.is_error, meta=res.meta)


def build_server(
    session: ToolSession, *, answer_file: Path | None = None, on_submit: Callable[[str], None] | None = None
) -> Server[Any]:
    """A low-level MCP server whose tools act on ``session`` (one task, one trajectory): a local
    session, or a :class:`~ctbench.replay.client.RemoteSession` (``ctb-replay mcp --connect``)."""
    tools = ReplayTools(session, answer_file=answer_file, on_submit=on_submit)

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        if params.name == INVALID_REQUEST_TOOL:  # a line the stdio reader refused (see mcp_lines)
            return _result(
                str((params.arguments or {}).get("problem", "the request was refused")), error=True
            )
        return call_tool_result(tools, params.name, params.arguments)

    server: Server[Any] = Server(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=INPUT_SCHEMAS.get,
    )
    # The SDK's OpenTelemetry middleware is a no-op without an exporter but still costs per call.
    server.middleware.clear()
    return server


def build_dispatch_server(tools_for: Callable[[Any], ReplayTools | None]) -> Server[Any]:
    """One MCP server for many replay sessions: ``tools_for(http_request)`` picks the session's tools
    for each call (None: the session is gone, answered as a tool error). The runner's per-session
    streamable-HTTP endpoints use it; the tools, texts and results are those of :func:`build_server`."""

    async def list_tools(
        ctx: ServerRequestContext[Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        return ListToolsResult(tools=TOOLS)

    async def call_tool(ctx: ServerRequestContext[Any], params: CallToolRequestParams) -> CallToolResult:
        tools = tools_for(ctx.request)
        if tools is None:
            return _result("This replay session is closed.", error=True)
        return call_tool_result(tools, params.name, params.arguments)

    server: Server[Any] = Server(
        SERVER_NAME,
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        get_tool_input_schema=INPUT_SCHEMAS.get,
    )
    server.middleware.clear()
    return server


def run_stdio(server: Server[Any]) -> None:
    """Serve on stdin/stdout until the client closes the pipe; every request line gets a reply."""
    import sys

    import anyio
    from mcp.server.stdio import stdio_server

    async def main() -> None:
        raw = anyio.wrap_file(UnownedTextReader(sys.stdin.buffer, encoding="utf-8", errors="replace"))
        stdin: Any = RepairedStdin(raw)
        async with stdio_server(stdin=stdin) as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)


def run_http(
    server: Server[Any], host: str, port: int, *, announce: Callable[[str], None] | None = None
) -> None:
    """Serve streamable HTTP at ``http://host:port/mcp`` until interrupted (port 0: a free port)."""
    from ctbench.replay.listen import bind_socket, socket_url, uvicorn_server

    sock = bind_socket(host, port)
    app = RepairingApp(server.streamable_http_app(streamable_http_path="/mcp", host=host))
    if announce is not None:
        announce(f"{socket_url(sock)}/mcp")
    uvicorn_server(app).run(sockets=[sock])
