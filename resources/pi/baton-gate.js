/**
 * Baton's approval gate for pi (loaded with `pi --mode rpc --no-extensions -e <this file>`).
 *
 * pi runs its own tools. This extension stops each tool call before it runs and asks Baton,
 * over pi's extension-UI sub-protocol (an `input` dialog: `extension_ui_request` on stdout,
 * Baton's `extension_ui_response` on stdin), whether it may run. Baton decides with its own
 * approval gate: the policy, the rules, the approval dialog or terminal prompt.
 *
 * The question: title `baton-gate/1`, placeholder = JSON {toolCallId, toolName, input}.
 * The answer: value = JSON {allow: bool, reason?: string, input?: object}. `input` replaces
 * the call's arguments (a person edited them before approving).
 *
 * Fail closed: no answer, a cancelled dialog or an unreadable answer blocks the call.
 * The `baton-gate` command exists only so Baton can check (RPC `get_commands`) that this
 * file was loaded before it sends the task.
 */

const TITLE = "baton-gate/1";

export default function (pi) {
	pi.registerCommand("baton-gate", {
		description: "Baton's approval gate (loaded)",
		handler: async () => {},
	});

	pi.on("tool_call", async (event, ctx) => {
		const question = JSON.stringify({
			toolCallId: event.toolCallId,
			toolName: event.toolName,
			input: event.input,
		});
		let answer;
		try {
			const value = await ctx.ui.input(TITLE, question, { signal: ctx.signal });
			answer = typeof value === "string" ? JSON.parse(value) : undefined;
		} catch {
			answer = undefined;
		}
		if (!answer || typeof answer !== "object") {
			return { block: true, reason: "Blocked: Baton's approval gate did not answer." };
		}
		if (answer.allow !== true) {
			const reason = typeof answer.reason === "string" && answer.reason ? answer.reason : "Denied.";
			return { block: true, reason };
		}
		if (answer.input && typeof answer.input === "object" && !Array.isArray(answer.input)) {
			for (const key of Object.keys(event.input)) delete event.input[key];
			Object.assign(event.input, answer.input);
		}
		return undefined;
	});
}
