import { type ChatMessage, type LanguageModel, ModelFailure, type ToolDefinition } from './model';

/** A tool the model may call: a JSON-Schema object for its arguments and the function that runs it. */
export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolCallRecord {
  name: string;
  arguments: Record<string, unknown>;
  result: unknown;
}

/** Rounds of tool requests the model gets before it must answer. */
export const MAX_TOOL_ROUNDS = 4;

/**
 * Lets the model plan by calling tools: each round it may request tools, which run in process
 * (at most `maxCalls` in all; later requests are answered with an error and not run), until it
 * answers with prose.
 * @throws ModelFailure (including `tool_loop_exhausted` when it never answers)
 */
export async function runToolLoop(options: {
  model: LanguageModel;
  system: string;
  user: string;
  tools: readonly ModelTool[];
  execute(name: string, args: Record<string, unknown>): Promise<unknown>;
  maxCalls: number;
  signal?: AbortSignal;
}): Promise<{ content: string; calls: ToolCallRecord[] }> {
  const definitions: ToolDefinition[] = options.tools.map((t) => ({
    type: 'function',
    function: { name: t.name, description: t.description, parameters: t.parameters },
  }));
  const known = new Set(options.tools.map((t) => t.name));
  const messages: ChatMessage[] = [
    { role: 'system', content: options.system },
    { role: 'user', content: options.user },
  ];
  const calls: ToolCallRecord[] = [];
  for (let round = 0; round <= MAX_TOOL_ROUNDS; round += 1) {
    const offerTools = round < MAX_TOOL_ROUNDS && calls.length < options.maxCalls;
    const turn = await options.model.complete({
      messages,
      ...(offerTools ? { tools: definitions } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    if (turn.toolCalls.length === 0 || !offerTools) {
      const content = turn.content?.trim() ?? '';
      if (content.length === 0 && turn.toolCalls.length > 0) {
        throw new ModelFailure(
          'tool_loop_exhausted',
          'the model kept asking for tools after its step budget',
        );
      }
      if (content.length === 0) throw new ModelFailure('empty_response', 'the model returned no prose');
      return { content, calls };
    }
    messages.push({
      role: 'assistant',
      content: turn.content,
      tool_calls: turn.toolCalls.map((c) => ({
        id: c.id,
        type: 'function',
        function: { name: c.name, arguments: c.arguments },
      })),
    });
    for (const call of turn.toolCalls) {
      let result: unknown;
      let args: Record<string, unknown> = {};
      try {
        args = call.arguments.trim() === '' ? {} : (JSON.parse(call.arguments) as Record<string, unknown>);
      } catch {
        result = { error: 'arguments are not JSON' };
      }
      if (result !== undefined) {
        // answered above
      } else if (!known.has(call.name)) {
        result = { error: `unknown tool ${call.name}` };
      } else if (calls.length >= options.maxCalls) {
        result = { error: 'step budget exhausted; answer with what you have' };
      } else {
        result = await options.execute(call.name, args);
        calls.push({ name: call.name, arguments: args, result });
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(result) });
    }
  }
  // Unreachable: the last round offers no tools, so it returns or throws above.
  throw new ModelFailure('tool_loop_exhausted', `no answer after ${MAX_TOOL_ROUNDS} rounds of tool calls`);
}
