/**
 * Node 20 lacks `Promise.withResolvers` (Node 22 has it); @platformatic/kafka 2.x calls it. Test
 * files that load that client import this module first (ES modules evaluate imports in order),
 * so the client finds it. Defined only where missing, with the standard's shape.
 */
interface Resolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const withResolvers = <T>(): Resolvers<T> => {
  let resolve!: Resolvers<T>['resolve'];
  let reject!: Resolvers<T>['reject'];
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
};

const promiseStatics = Promise as unknown as { withResolvers?: typeof withResolvers };
if (typeof promiseStatics.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', { value: withResolvers, writable: true, configurable: true });
}
