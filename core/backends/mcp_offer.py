"""Which MCP tools one own-loop step gets (architecture: "Tools, approvals and trust").

The servers are the user's and, only when the person trusted the project and its files did
not change since (:meth:`~core.backends.base.StepContext.checkout_trusted`), the project's
``.mcp.json``; from them the agent's frontmatter picks (``mcp:``, ``mcp__server__tool`` in
``tools:``). A stdio server is confined the way this step's ``bash`` is.
"""

from __future__ import annotations

from core.backends.base import StepContext
from core.config.looks import one_look
from core.config.mcp_servers import configuration_problems, configured_servers
from core.safety.environment import known_key_names
from core.tools.base import Tool
from core.tools.mcp_hub import Confinement, McpHub
from core.tools.mcp_tool import McpSelection, offer_mcp_tools


async def offer_step_mcp_tools(ctx: StepContext, hub: McpHub) -> tuple[dict[str, Tool], list[str]]:
    """The step's MCP tools by name, and warnings about what could not be offered."""
    agent = ctx.agent
    selection = McpSelection.of(agent.mcp, agent.mcp_tools)
    with one_look():  # the servers started are the ones of the .mcp.json compared
        trusted = ctx.checkout_trusted()
        entries = configured_servers(ctx.cwd, project_trusted=trusted)
        problems = configuration_problems(ctx.cwd, project_trusted=trusted)
    sandbox = ctx.settings.sandbox
    confinement = Confinement(
        cwd=ctx.cwd,
        sandbox=sandbox.enabled,
        network=sandbox.network and agent.network,
        env_allow=agent.env,
        secret_env=known_key_names(ctx.settings),
    )
    offered, warnings = await offer_mcp_tools(selection, entries, hub, confinement)
    return offered, problems + warnings
