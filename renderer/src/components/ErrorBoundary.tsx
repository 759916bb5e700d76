import { Component, type ContextType, type ErrorInfo, type ReactNode } from 'react';
import { StoreContext } from '../context.tsx';
import { translate, type Lang } from '../i18n/messages.ts';
import { reporter, shownScreen } from '../report-error.ts';

interface Props {
  /** 'screen': one screen under the header and navigation; 'app': the whole shell. */
  scope: 'screen' | 'app';
  /** What failed, for the console line (the screen's id, or "app"). */
  name: string;
  children?: ReactNode;
}

interface State {
  failed: boolean;
  /** The id the site logged the failure under (report-error.ts), once it answered. */
  reportedId?: string;
}

/**
 * A render error below it shows, in the chosen language, that this screen (or the UI) failed,
 * with Try again and Reload, instead of unmounting everything: a kiosk floor PC showed a white
 * page until someone reloaded. Around a screen, the header and the navigation above it stay
 * usable, and moving to another screen starts a fresh boundary (App gives it `key={screen}`).
 * While it shows the failure, each change of the store's state tries the screen again.
 * The error goes to the console (the browser's, or Electron's log) with the component stack, and
 * to the site (report-error.ts), whose log keeps it under an id the failure then shows, so the
 * person at the screen can tell IT which line it is.
 * Errors in event handlers and async code are not render errors: the store's `guard` shows those.
 */
export class ErrorBoundary extends Component<Props, State> {
  static override contextType = StoreContext;
  declare context: ContextType<typeof StoreContext>;
  override state: State = { failed: false };

  static getDerivedStateFromError(): State {
    return { failed: true };
  }

  override componentDidCatch(error: unknown, info: ErrorInfo): void {
    // Once per distinct error: a retry on each store change would log the same one every few seconds.
    const text = String(error);
    if (text === this.lastLogged) return;
    this.lastLogged = text;
    console.error(`tilstand: the ${this.props.name} ${this.props.scope === 'app' ? 'UI' : 'screen'} failed to render`, error, info.componentStack ?? '');
    const state = this.context?.getState();
    const stack = [error instanceof Error ? error.stack : undefined, info.componentStack ? `component stack:${info.componentStack}` : undefined].filter(Boolean).join('\n');
    const screen = this.props.scope === 'app' ? (state ? shownScreen(state) : 'app') : this.props.name;
    void reporter()
      ?.report('render', error, { screen, ...(state ? { lang: state.lang } : {}), ...(stack ? { stack } : {}) })
      .then((id) => {
        if (id !== null && !this.unmounted) this.setState({ reportedId: id });
      });
  }

  // While failed, any change of the store's state (a reload of what it failed on, a status push)
  // tries the screen again: a kiosk PC mends itself once the site's data does, with nobody at it.
  override componentDidUpdate(): void {
    if (this.state.failed && !this.unsubscribe) this.unsubscribe = this.context?.subscribe(this.retry);
    if (!this.state.failed) this.stopWatching();
  }

  override componentDidMount(): void {
    this.componentDidUpdate();
  }

  override componentWillUnmount(): void {
    this.unmounted = true;
    this.stopWatching();
  }

  override render(): ReactNode {
    if (!this.state.failed) return this.props.children;
    // Read when shown: a class cannot use the store's hook; App re-renders it when the language changes.
    const lang: Lang = this.context?.getState().lang ?? 'en';
    const app = this.props.scope === 'app';
    return (
      <section role="alert" className={`crashed ${app ? 'crashed-app' : ''}`} data-crashed={this.props.name}>
        <h2>⚠ {translate(lang, app ? 'crash.appTitle' : 'crash.screenTitle')}</h2>
        <p>{translate(lang, app ? 'crash.appBody' : 'crash.screenBody')}</p>
        {this.state.reportedId !== undefined ? (
          <p className="crash-reported" data-reported={this.state.reportedId}>
            {translate(lang, 'crash.reported', { id: this.state.reportedId })}
          </p>
        ) : (
          <p>{translate(lang, 'crash.notReported')}</p>
        )}
        <div className="actions">
          {!app && (
            <button type="button" className="primary crash-retry" onClick={this.readAgain}>
              {translate(lang, 'crash.retry')}
            </button>
          )}
          <button type="button" className={app ? 'primary crash-reload' : 'crash-reload'} onClick={reloadPage}>
            {translate(lang, 'crash.reload')}
          </button>
        </div>
      </section>
    );
  }

  /** Renders the children again (the data the screen failed on may have changed since). */
  // The id stays: the same error again is not sent again (lastLogged) and keeps its id.
  private readonly retry = (): void => this.setState({ failed: false });
  /** Try again: the screen's data read again (`resync`), and the screen rendered again meanwhile. */
  private readonly readAgain = (): void => {
    this.context?.getState().resync();
    this.retry();
  };
  private unsubscribe: (() => void) | undefined;
  private lastLogged: string | undefined;
  private unmounted = false;

  private stopWatching(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}

function reloadPage(): void {
  window.location.reload();
}
