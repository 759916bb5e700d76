// Pushed events are followed only while someone is signed in. Before sign-in the site refuses the
// events socket (403: core/site/ui-server.ts `upgrade`), so a socket opened then only retries, every
// 2 s, for as long as the floor PC shows the sign-in screen — a night at the sign-in screen was
// some 14,000 refused upgrades on the site and as many errors in the page's console.
import type { SiteEvent } from '../../../core/site/api.ts';
import type { AppStore } from '../store/store.ts';

/** `onResume`: the events flow again after a break (api/client.ts ClientApi): the store reads again. */
type Subscribe = (listener: (e: SiteEvent) => void, onResume: () => void) => () => void;

/**
 * Opens the event subscription when the store gets a signed-in user and closes it when the user is
 * gone again (signed out, idled out, session ended by the site). Returns a function that stops.
 */
export function followWhileSignedIn(store: AppStore, subscribe: Subscribe): () => void {
  let stop: (() => void) | undefined;
  const follow = (signedIn: boolean) => {
    if (signedIn && stop === undefined) stop = subscribe((e) => store.getState().applyEvent(e), () => store.getState().resync());
    else if (!signedIn && stop !== undefined) {
      stop();
      stop = undefined;
    }
  };
  follow(store.getState().user !== null);
  const unsubscribeStore = store.subscribe((s) => follow(s.user !== null));
  return () => {
    unsubscribeStore();
    follow(false);
  };
}
