import { useState } from 'react';
import type { ResourceView } from '../../../core/site/api.ts';
import { KeepCodes, Table } from '../components/common.tsx';
import { Waiting, waitingBy } from '../components/Waiting.tsx';
import { useApp, useT } from '../context.tsx';
import { formatNumber, formatWhen, timestampMs, valueWord, type MessageKey } from '../i18n/messages.ts';
import { useSearchLoad } from '../search-load.ts';
import { selectShownNow, selectShownYear, WORK_ROWS, yearStart } from '../store/store.ts';

const STATUS_ORDER = ['blocked', 'released', 'in_progress', 'done'];

/** The ids of the jobs past their due time at `nowMs` and not done, one a line (a selector's stable answer). */
export function overdueJobs(jobs: readonly { job_id: string; due_at: string | null; status: string }[], nowMs: number): string {
  return jobs
    .filter((j) => {
      const due = timestampMs(j.due_at);
      return due !== null && due < nowMs && j.status !== 'done';
    })
    .map((j) => j.job_id)
    .join('\n');
}

export function WorkQueue() {
  const t = useT();
  const lang = useApp((s) => s.lang);
  const jobs = useApp((s) => s.jobs);
  const resources = useApp((s) => s.resources);
  const waiting = useApp((s) => s.waiting);
  const byJob = waitingBy(waiting, (w) => w.job_id);
  const byResource = waitingBy(waiting, (w) => w.resource_id);
  const load = useApp((s) => s.loadWork);
  const more = useApp((s) => s.jobsMore);
  // What was asked for last (the field starts with it), and what the rows on the screen were read
  // with (the field, and a search on its way or refused, may be ahead of them).
  const askedSearch = useApp((s) => s.workSearch);
  const shownSearch = useApp((s) => s.workShownSearch);
  const [q, setQ] = useState(askedSearch);
  // The site's clock when it has told it (as the inbox does), else this PC's: to the year for the
  // due times (`formatWhen`), and which jobs are overdue by it, as a key that changes only when that
  // set does — selected as is, the clock moved each second while the site is quiet and the whole
  // 500-row table rendered again each second.
  const now = useApp(selectShownYear) ?? yearStart(Date.now());
  const overdueKey = useApp((s) => overdueJobs(s.jobs, selectShownNow(s) ?? Date.now()));
  const overdue = new Set(overdueKey === '' ? [] : overdueKey.split('\n'));
  // Asks the site at once on opening; typing waits a quarter second (search-load.ts).
  useSearchLoad(() => void load(q), [q, load]);
  // The site sends them sorted so (core/site/service.ts `jobs`), and cut after that order.
  const sorted = [...jobs].sort((a, b) => STATUS_ORDER.indexOf(a.status) - STATUS_ORDER.indexOf(b.status) || (b.priority ?? 0) - (a.priority ?? 0));
  // A value outside the contract's symbols (a newer contract version) is shown as it came.
  const status = (s: string) => valueWord(lang, 'work_queue', 'status', s) ?? s;
  const state = (s: string | null) => (s === null ? '' : (valueWord(lang, 'resources', 'state', s) ?? s));
  // A TIMESTAMP's text (`ms` read from it) in this PC's time zone; text that is no time as it came.
  const when = (text: string | null, ms: number | null) => (text === null ? '' : ms === null ? text : formatWhen(lang, ms, now));
  // The search names resources too: the site filters the jobs, the machines and teams are
  // filtered here, by id, kind, capability or state (as stored or in words), as the jobs are, and
  // by the search the jobs shown were read with: not a machine of one search beside the jobs of another.
  const shown = resourcesMatching(resources, shownSearch, state);
  return (
    <div className="work">
      <section>
        <h2>{t('work.jobs')}</h2>
        <label className="search">
          {t('work.search')}
          <input name="search" type="search" value={q} onChange={(e) => setQ(e.target.value)} />
        </label>
        {more && <p className="muted rows-cut">{t('work.more', { n: formatNumber(lang, WORK_ROWS) })}</p>}
        <Table label={t('work.jobs')} head={[t('work.job'), t('work.status'), t('work.blocked'), t('work.capability'), t('work.priority'), t('work.due'), t('work.assigned'), t('work.waiting')]}>
          {sorted.map((j) => {
            const due = timestampMs(j.due_at);
            const isOverdue = overdue.has(j.job_id);
            return (
              <tr key={j.job_id} className={j.status === 'blocked' ? 'attention' : ''} data-job={j.job_id}>
                <td className="code">{j.job_id}</td>
                <td className="word" data-status={j.status}>{j.status === 'blocked' ? `⊘ ${status(j.status)}` : status(j.status)}</td>
                <td>{j.blocked_reason === null ? '' : <KeepCodes text={j.blocked_reason} />}</td>
                <td>{j.capability ?? ''}</td>
                <td>{j.priority === null ? '' : formatNumber(lang, j.priority)}</td>
                <td className={isOverdue ? 'due overdue' : 'due'} title={j.due_at ?? undefined}>
                  {/* A time is one value ("Mon 7 Dec, 00:52" on three lines read as three); the overdue tag may go under it. */}
                  <span className="when">{when(j.due_at, due)}</span>
                  {isOverdue ? <span className="chip-alert overdue-tag"> {t('work.overdue')}</span> : null}
                </td>
                <td className="assigned code">{j.assigned_resource ?? ''}</td>
                <td className="waiting-cell">
                  <Waiting items={byJob.get(j.job_id)} />
                </td>
              </tr>
            );
          })}
        </Table>
        {/* A search that matches nothing: said, not an empty table that looks unloaded. */}
        {jobs.length === 0 && shownSearch.trim() !== '' ? <p className="muted no-rows">{t('rows.noMatch')}</p> : null}
      </section>
      <section>
        <h2>{t('work.resources')}</h2>
        <Table label={t('work.resources')} head={[t('work.resource'), t('work.capability'), t('work.state'), t('work.since'), t('work.waiting')]}>
          {shown.map((r) => {
            const since = timestampMs(r.since);
            return (
              <tr key={r.resource_id} className={r.state === 'down' ? 'attention' : ''} data-resource={r.resource_id}>
                <td className="code">{r.resource_id}</td>
                <td>{r.capability ?? ''}</td>
                <td className="word" data-state={r.state ?? ''}>{r.state === 'down' ? `⚠ ${state(r.state)}` : state(r.state)}</td>
                <td title={r.since ?? undefined}>
                  <span className="when">{when(r.since, since)}</span>
                </td>
                <td className="waiting-cell">
                  <Waiting items={byResource.get(r.resource_id)} />
                </td>
              </tr>
            );
          })}
        </Table>
        {shown.length === 0 && resources.length > 0 ? <p className="muted no-rows no-resources">{t('rows.noMatch')}</p> : null}
      </section>
    </div>
  );
}

/**
 * The resources whose id, kind, capability or state — as stored, or `stateWord` of it — contains
 * `search` (case-insensitive, as the site matches jobs); all of them for an empty search.
 */
export function resourcesMatching(resources: readonly ResourceView[], search: string, stateWord: (s: string | null) => string): ResourceView[] {
  const q = search.trim().toLowerCase();
  if (!q) return [...resources];
  const has = (v: string | null) => v !== null && v.toLowerCase().includes(q);
  return resources.filter((r) => has(r.resource_id) || has(r.kind) || has(r.capability) || has(r.state) || has(stateWord(r.state)));
}
