// An age counted on the site's clock as shown (`selectShownNow`): the one part of a row or line
// that ticks. While the site is quiet the shown clock moves every second; selected by a screen, it
// rendered the screen and every row again each second (a 500-row inbox), where only the ages move.
import { useApp } from '../context.tsx';
import { formatDuration } from '../i18n/messages.ts';
import { selectShownNow } from '../store/store.ts';

/** How long since `fromMs` by the site's clock (this page's before any status), in the chosen language. */
export function Age({ fromMs }: { fromMs: number }) {
  const lang = useApp((s) => s.lang);
  const now = useApp(selectShownNow) ?? Date.now();
  return <>{formatDuration(lang, Math.max(0, now - fromMs))}</>;
}
