// The Dead letters screen's list (site API `deadLetters`) is capped by core/ingest's
// DEAD_LETTER_LIST_MAX, the same bound as the control op `deadletters.list` and `tilstand
// deadletters list --limit`: one constant, not a copy of its value in api-validate.ts. The
// constant is set to another value here, so a copy would show.
import { describe, expect, it, vi } from 'vitest';

vi.mock('../ingest/ingestor.ts', async (original) => ({ ...(await original<typeof import('../ingest/ingestor.ts')>()), DEAD_LETTER_LIST_MAX: 50 }));

const { DEAD_LETTER_LIST_MAX } = await import('../ingest/ingestor.ts');
const { ApiValidationError, validateCall } = await import('./api-validate.ts');

describe("the deadLetters list's cap", () => {
  it("is core/ingest's DEAD_LETTER_LIST_MAX", () => {
    expect(DEAD_LETTER_LIST_MAX).toBe(50);
    expect(validateCall('deadLetters', { limit: 50 }).req).toEqual({ limit: 50 });
    let refused: unknown;
    try {
      validateCall('deadLetters', { limit: 51 });
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(ApiValidationError);
    expect((refused as InstanceType<typeof ApiValidationError>).refusal).toMatchObject({ code: 'input.range', params: { field: 'limit', min: 1, max: 50 } });
  });
});
