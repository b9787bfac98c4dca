/**
 * The pages' shared state: the route (the location's hash: #/topics/t?page=1, so every view
 * has an address and the back button works), and data loaded from the API with its error.
 */
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './api.js';

export interface Route {
  /** Decoded path segments: ['topics', 'orders', 'messages']. */
  parts: string[];
  params: URLSearchParams;
}

function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, '');
  const [path = '', q = ''] = hash.split('?', 2);
  return {
    parts: path
      .split('/')
      .filter((s) => s !== '')
      .map(decodeURIComponent),
    params: new URLSearchParams(q),
  };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const changed = () => setRoute(currentRoute());
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export function navigate(path: string): void {
  location.hash = `#${path}`;
}

export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
  reload: () => void;
}

/**
 * GETs `path` (again when it changes, and every `refreshMs` when given). Data loaded for another
 * path is never returned: a new address shows nothing until its own answer comes.
 */
export function useApi<T>(path: string | undefined, refreshMs?: number): Loaded<T> {
  const [state, setState] = useState<{ path?: string; data?: T; error?: string; loading: boolean }>({ loading: path !== undefined });
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    if (path === undefined) return;
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    api<T>(path).then(
      (data) => live && setState({ path, data, loading: false }),
      (err: Error) => live && setState({ path, error: err.message, loading: false }),
    );
    const timer = refreshMs ? setTimeout(reload, refreshMs) : undefined;
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [path, tick, refreshMs, reload]);
  const current = state.path === path;
  return { data: current ? state.data : undefined, error: current ? state.error : undefined, loading: state.loading || !current, reload };
}
