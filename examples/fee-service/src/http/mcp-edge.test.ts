import { describe, expect, it } from 'vitest';
import { isMcpPost, mcpEdgeRequest, toolCallsOf } from './mcp-edge';

const json = (value: unknown) => Buffer.from(JSON.stringify(value));

describe('the MCP edge', () => {
  it.each([
    ['POST', '/mcp', true],
    ['post', '/mcp?x=1', true],
    ['POST', '/MCP', true],
    ['POST', '/mcp/', true],
    ['POST', '/%6Dcp', true],
    ['GET', '/mcp', false],
    ['POST', '/mcp/x', false],
    ['POST', '/%zz', false],
    ['POST', '/api/v1/fees/now', false],
  ])('%s %s goes to the MCP endpoint with a body: %s', (method, target, expected) => {
    expect(isMcpPost({ method, target })).toBe(expected);
  });

  it('reads the tools/call names of one message or a batch, none of what is no JSON', () => {
    const call = (name: unknown) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name } });
    expect(toolCallsOf(json(call('a')))).toEqual(['a']);
    expect(toolCallsOf(json([call('a'), { method: 'tools/list' }, call(3)]))).toEqual(['a', '']);
    expect(toolCallsOf(Buffer.from('{'))).toEqual([]);
    expect(toolCallsOf(json(null))).toEqual([]);
  });

  it("judges a tools/call as its tool's route, anything else as itself", async () => {
    const request = { method: 'POST', target: '/mcp' };
    const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'get_next_block' } };
    expect(await mcpEdgeRequest(request, async () => json(call))).toEqual({
      method: 'TOOL',
      target: '/get_next_block',
    });
    expect(await mcpEdgeRequest(request, async () => json({ method: 'initialize' }))).toBe(request);
    expect(
      await mcpEdgeRequest(request, () => Promise.reject(new Error('request body larger than 65536 bytes'))),
    ).toBe(request);
  });
});
