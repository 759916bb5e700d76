// The approval inbox's age (`oldestUncheckedCommitMs`, which the site subtracts from now) on a wall
// clock that steps (NTP after a cold boot, a person setting the PC's time): counted on the
// monotonic clock from the moment the agent first sees a commit, so a step forward does not make
// the inbox look late (a false budget_breach) and a step back does not hide a stuck agent.
// The wall clock is the TestSite's (snapshots take their times from it); the monotonic one is the
// test's own, injected.
import { afterEach, describe, expect, it } from 'vitest';
import { TestSite } from './test-support.ts';

let site: TestSite;
afterEach(() => site?.close());

const HOUR = 3_600_000;

function setup() {
  site = new TestSite();
  let mono = 1_000_000;
  site.job({ job_id: 'J-1' });
  site.commit();
  const { agent } = site.agentAndInbox({ agent: { monotonicClock: () => mono } });
  agent.run(); // checks every table through its latest snapshot
  const age = () => {
    const since = agent.oldestUncheckedCommitMs();
    return since === null ? null : site.nowMs - since;
  };
  /** Time passes: both clocks move by `ms`. */
  const pass = (ms: number) => {
    site.nowMs += ms;
    mono += ms;
  };
  /** The wall clock alone moves (a step). */
  const step = (ms: number) => {
    site.nowMs += ms;
  };
  const commitJob = (id: string) => {
    site.job({ job_id: id });
    site.commit();
  };
  return { agent, age, pass, step, commitJob };
}

describe("the inbox's age across a step of the wall clock", () => {
  it('a step forward after the commit was seen does not age it', () => {
    const { agent, age, pass, step, commitJob } = setup();
    expect(age()).toBeNull();
    pass(500);
    commitJob('J-2');
    pass(300);
    expect(age()).toBe(300); // seen: 300 ms since the commit
    step(HOUR);
    pass(200);
    expect(age()).toBe(500); // was 1 h 500 ms: a budget breach the moment NTP set the clock
    agent.recheckChanged();
    expect(age()).toBeNull();
  });

  it('a step back does not hide an agent that stopped checking', () => {
    const { age, pass, step, commitJob } = setup();
    pass(1_000);
    commitJob('J-2');
    pass(300);
    expect(age()).toBe(300);
    step(-HOUR);
    // No check for 5 s: the age grows as time passes, whatever the wall clock says.
    for (let i = 1; i <= 5; i++) {
      pass(1_000);
      expect(age()).toBe(300 + i * 1_000); // was negative (shown as 0) for the next hour
    }
  });

  it('a step between the commit and its first sight moves the age by at most the time since the last look', () => {
    const { age, pass, step, commitJob } = setup();
    pass(1_000);
    expect(age()).toBeNull(); // a look: nothing unchecked, 1 s after the run
    pass(400);
    commitJob('J-2');
    step(HOUR);
    pass(200);
    // The snapshot's wall time says 1 h 200 ms; the commit came after the last look, 600 ms ago.
    expect(age()).toBe(600);
    pass(100);
    expect(age()).toBe(700);
  });

  it('without a step the age is the commit’s wall-clock age, as before, also for a commit seen late', () => {
    const { agent, age, pass, commitJob } = setup();
    pass(1_000);
    commitJob('J-2');
    pass(1_000);
    commitJob('J-3');
    pass(2_500);
    // The oldest unchecked commit (J-2's), first seen 3.5 s after it was made.
    expect(age()).toBe(3_500);
    // A check reads both; J-4 after it counts from its own commit.
    agent.recheckChanged();
    expect(age()).toBeNull();
    pass(700);
    commitJob('J-4');
    pass(50);
    expect(age()).toBe(50);
  });

  it('a check that fails keeps the age counting from the first sight (the recheck sees the commit too)', () => {
    const { agent, age, pass, step, commitJob } = setup();
    pass(1_000);
    commitJob('J-2');
    pass(100);
    // The check sees the commit and then fails before it is through (a broken read).
    const inbox = (agent as unknown as { o: { inbox: { openProposals: () => unknown } } }).o.inbox;
    const open = inbox.openProposals;
    inbox.openProposals = () => {
      throw new Error('injected');
    };
    expect(() => agent.recheckChanged()).toThrow('injected');
    inbox.openProposals = open;
    step(HOUR);
    pass(400);
    expect(age()).toBe(500);
  });
});

describe('the default monotonic clock', () => {
  it('is the injected wall clock when only that is given (a simulated clock stays deterministic)', () => {
    site = new TestSite();
    site.job({ job_id: 'J-1' });
    site.commit();
    const { agent } = site.agentAndInbox();
    agent.run();
    site.nowMs += 2_000;
    const at = site.nowMs;
    site.job({ job_id: 'J-2' });
    site.commit();
    site.nowMs += 700;
    expect(agent.oldestUncheckedCommitMs()).toBe(at);
  });
});
