// The Work queue screen rendered from the store's state (server-side markup, no browser): a due
// time is shown in this PC's time zone (the table's TIMESTAMP is the UTC wall clock), a job past
// its due time and not done is marked overdue, and statuses and states are in the chosen language.
import { createElement } from 'react';
import { renderToStaticMarkup } from 'react-dom/server';
import { describe, expect, it } from 'vitest';
import { inTimeZone } from '../testing/time-zone.ts';
import type { JobView, ResourceView, SiteApi, SiteStatus, WaitingProposal } from '../../../core/site/api.ts';
import { StoreContext } from '../context.tsx';
import { timestampMs } from '../i18n/messages.ts';
import { createAppStore } from '../store/store.ts';
import { WorkQueue } from './WorkQueue.tsx';

const job = (over: Partial<JobView>): JobView => ({
  job_id: 'J-1',
  status: 'released',
  blocked_reason: null,
  capability: 'pick',
  material_item: null,
  material_qty: null,
  priority: 1,
  due_at: null,
  assigned_resource: null,
  ...over,
});

function render(jobs: JobView[], resources: ResourceView[], nowMs: number, lang: 'en' | 'nb' | 'de' = 'en', waiting: WaitingProposal[] = [], jobsMore = false, workSearch = ''): string {
  const store = createAppStore({} as SiteApi);
  store.setState({ jobs, resources, lang, status: { nowMs } as SiteStatus, waiting, jobsMore, workSearch, workShownSearch: workSearch });
  store.getInitialState = store.getState;
  return renderToStaticMarkup(createElement(StoreContext.Provider, { value: store }, createElement(WorkQueue)));
}

const row = (html: string, attr: string): string => {
  const at = html.indexOf(attr);
  expect(at, `${attr} in the markup`).toBeGreaterThanOrEqual(0);
  return html.slice(at, html.indexOf('</tr>', at));
};

describe('Work queue screen', () => {
  inTimeZone('Europe/Oslo'); // UTC+1 in December (node applies a changed TZ at once)

  it('reads a TIMESTAMP without a zone as UTC, and one with a zone as written', () => {
    expect(timestampMs('2026-12-02T09:36:13.017')).toBe(Date.UTC(2026, 11, 2, 9, 36, 13, 17));
    expect(timestampMs('2026-12-02 09:36')).toBe(Date.UTC(2026, 11, 2, 9, 36));
    expect(timestampMs('2026-12-02T09:36:13Z')).toBe(Date.UTC(2026, 11, 2, 9, 36, 13));
    expect(timestampMs('2026-12-02T10:36:13+01:00')).toBe(Date.UTC(2026, 11, 2, 9, 36, 13));
    expect(timestampMs('tomorrow')).toBeNull();
    expect(timestampMs(null)).toBeNull();
  });

  it('has a search, and says when the site had more jobs than it shows', () => {
    const html = render([job({})], [], Date.UTC(2026, 11, 2, 8, 0), 'en', [], true);
    expect(html).toContain('<label class="search">Search job, item, resource or status<input type="search" name="search" value=""/></label>');
    expect(html).toContain('The first 500 jobs, blocked and released first: search to find the others.');
    expect(render([job({})], [], Date.UTC(2026, 11, 2, 8, 0), 'nb', [], true)).toContain('De første 500 jobbene');
    expect(render([job({})], [], Date.UTC(2026, 11, 2, 8, 0))).not.toContain('rows-cut');
  });

  it('shows due and since in local time, not the UTC text', () => {
    const now = Date.UTC(2026, 11, 2, 8, 0);
    const html = render(
      [job({ job_id: 'J-1', due_at: '2026-12-02T09:36:13.017' })],
      [{ resource_id: 'PICK-A', kind: 'team', capability: 'pick', state: 'free', since: '2026-12-02T07:05:00.000' }],
      now,
    );
    const j = row(html, 'data-job="J-1"');
    expect(j).toContain('title="2026-12-02T09:36:13.017"'); // the stored value on hover
    const shown = j.replace(/ title="[^"]*"/g, '');
    expect(shown).toContain('10:36');
    expect(shown).not.toContain('09:36');
    expect(shown).not.toContain('2026-12-02T');
    expect(row(html, 'data-resource="PICK-A"')).toContain('08:05');
    expect(shown).not.toContain('2026'); // this year's: no year
    // The site's clock in the next year: a job due last December says so (its year, by the site's clock, not this PC's).
    const nextYear = render([job({ job_id: 'J-1', due_at: '2026-12-02T09:36:13.017' })], [], Date.UTC(2027, 0, 4, 8, 0));
    expect(row(nextYear, 'data-job="J-1"').replace(/ title="[^"]*"/g, '')).toContain('2 Dec 2026, 10:36');
  });

  it('marks a job past its due time as overdue unless it is done', () => {
    const now = Date.UTC(2026, 11, 2, 10, 0);
    const html = render(
      [
        job({ job_id: 'J-late', status: 'in_progress', due_at: '2026-12-02T09:36:00.000' }),
        job({ job_id: 'J-done', status: 'done', due_at: '2026-12-02T09:36:00.000' }),
        job({ job_id: 'J-later', due_at: '2026-12-02T10:30:00.000' }),
        job({ job_id: 'J-none' }),
      ],
      [],
      now,
    );
    expect(row(html, 'data-job="J-late"')).toContain('overdue');
    expect(row(html, 'data-job="J-done"')).not.toContain('overdue');
    expect(row(html, 'data-job="J-later"')).not.toContain('overdue');
    expect(row(html, 'data-job="J-none"')).not.toContain('overdue');
  });

  it('shows statuses and states in the chosen language, and a value it does not know as it came', () => {
    const now = Date.UTC(2026, 11, 2, 10, 0);
    const jobs = [job({ job_id: 'J-b', status: 'blocked', blocked_reason: 'material short' }), job({ job_id: 'J-x', status: 'on_hold' })];
    const resources: ResourceView[] = [{ resource_id: 'FORK-1', kind: 'machine', capability: 'forklift', state: 'down', since: null }];
    const nb = render(jobs, resources, now, 'nb');
    expect(row(nb, 'data-job="J-b"')).toContain('blokkert');
    expect(row(nb, 'data-job="J-x"')).toContain('on_hold');
    expect(row(nb, 'data-resource="FORK-1"')).toContain('ute av drift');
    const de = render(jobs, resources, now, 'de');
    expect(row(de, 'data-job="J-b"')).toContain('blockiert');
    expect(row(de, 'data-resource="FORK-1"')).toContain('ausgefallen');
    // No glyph that common fonts lack (DejaVu, which Debian's chromium falls back to, has ⊘ and ⚠).
    expect(nb).not.toContain('⛔');
  });

  it('keeps a code in "Blocked because" whole ("material short: ITEM-/003"), and a status and a due time on one line', () => {
    const now = Date.UTC(2026, 11, 2, 8, 0);
    const html = render([job({ job_id: 'J-b', status: 'blocked', blocked_reason: 'material short: ITEM-003', due_at: '2026-12-02T09:36:13.017' })], [], now);
    const j = row(html, 'data-job="J-b"');
    expect(j).toContain('<td>material short: <span class="code">ITEM-003</span></td>');
    expect(j).toContain('<td class="word" data-status="blocked">⊘ blocked</td>');
    expect(j).toMatch(/<td class="due" title="2026-12-02T09:36:13.017"><span class="when">Wed 2 Dec, 10:36<\/span><\/td>/);
  });

  it('filters the machines and teams by the search as well, and says when none matches', () => {
    const now = Date.UTC(2026, 11, 2, 8, 0);
    const resources: ResourceView[] = [
      { resource_id: 'FORK-1', kind: 'machine', capability: 'forklift', state: 'down', since: null },
      { resource_id: 'PICK-A', kind: 'team', capability: 'pick', state: 'free', since: null },
      { resource_id: 'PACK-1', kind: 'machine', capability: 'pack', state: 'busy', since: null },
    ];
    const shown = (html: string) => [...html.matchAll(/data-resource="([^"]+)"/g)].map((m) => m[1]);
    expect(shown(render([], resources, now))).toEqual(['FORK-1', 'PICK-A', 'PACK-1']);
    expect(shown(render([], resources, now, 'en', [], false, 'fork'))).toEqual(['FORK-1']); // id and capability
    expect(shown(render([], resources, now, 'en', [], false, ' Team '))).toEqual(['PICK-A']); // kind, any case
    expect(shown(render([], resources, now, 'en', [], false, 'busy'))).toEqual(['PACK-1']); // state as stored
    expect(shown(render([], resources, now, 'nb', [], false, 'ute av drift'))).toEqual(['FORK-1']); // state in words
    const none = render([], resources, now, 'en', [], false, 'J-0010');
    expect(shown(none)).toEqual([]);
    expect(none).toContain('<p class="muted no-rows no-resources">No rows match.</p>');
    expect(render([], resources, now)).not.toContain('no-resources');
  });

  it('shows on a job and a resource the proposals about them that wait for a decision', () => {
    const now = Date.UTC(2026, 11, 2, 10, 0);
    const w = (over: Partial<WaitingProposal>): WaitingProposal => ({ id: 'P-1', action: 'assign_job', status: 'open', risk: 'low', job_id: null, resource_id: null, item: null, location: null, ...over });
    const waiting = [
      w({ id: 'P-20261202-100000-000-1', job_id: 'J-1', resource_id: 'PACK-1' }),
      w({ id: 'P-20261202-100000-000-2', action: 'escalate_job', status: 'deferred', risk: 'medium', job_id: 'J-1' }),
      w({ id: 'P-20261202-100000-000-3', action: 'reprioritise', job_id: 'J-2' }),
    ];
    const jobs = [job({ job_id: 'J-1' }), job({ job_id: 'J-2' }), job({ job_id: 'J-3' })];
    const resources: ResourceView[] = [
      { resource_id: 'PACK-1', kind: 'machine', capability: 'pack', state: 'free', since: null },
      { resource_id: 'PICK-A', kind: 'team', capability: 'pick', state: 'free', since: null },
    ];
    const html = render(jobs, resources, now, 'en', waiting);
    expect(html).toContain('<th scope="col">Waiting for a decision</th>');
    const j1 = row(html, 'data-job="J-1"');
    expect(j1).toContain('data-waiting="P-20261202-100000-000-1" title="Open proposal P-20261202-100000-000-1 in the inbox">Assignment proposed →</button>');
    expect(j1).toContain('>Escalation proposed · deferred →</button>');
    // An action this UI does not know is shown as the agent named it.
    expect(row(html, 'data-job="J-2"')).toContain('>reprioritise →</button>');
    expect(row(html, 'data-job="J-3"')).not.toContain('data-waiting');
    expect(row(html, 'data-resource="PACK-1"')).toContain('data-waiting="P-20261202-100000-000-1"');
    expect(row(html, 'data-resource="PICK-A"')).not.toContain('data-waiting');
    expect(row(render(jobs, resources, now, 'nb', waiting), 'data-job="J-1"')).toContain('>Eskalering foreslått · utsatt →</button>');
  });
});
