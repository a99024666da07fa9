/**
 * The stream idle clock (s01–s06; shared runtime, not a chapter's mechanism).
 *
 * The SDK's timeout covers the wait for a response to begin, not a stream that goes quiet halfway.
 * This clock starts when the response does (not during the SDK's retries), starts again with every
 * event, and gives up on the reply when it runs out.
 */
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import type { Message } from '@anthropic-ai/sdk/resources/messages';

/** The stream's complete message, or an error if it sends nothing for STREAM_IDLE_SECONDS (90). */
export async function finalMessage(stream: MessageStream): Promise<Message> {
  const IDLE_SECONDS = Number(process.env.STREAM_IDLE_SECONDS) || 90;
  let idle: NodeJS.Timeout | undefined;
  let stalled = false;
  const restartClock = () => {
    clearTimeout(idle);
    idle = setTimeout(() => {
      stalled = true;
      stream.abort();
    }, IDLE_SECONDS * 1000);
  };
  stream.on('connect', restartClock);
  stream.on('streamEvent', restartClock);
  try {
    return await stream.finalMessage();
  } catch (err) {
    const silence = `the API sent nothing for ${IDLE_SECONDS} s`;
    if (stalled) throw new Error(`${silence}; gave up on this reply`);
    throw err;
  } finally {
    clearTimeout(idle);
  }
}
