/**
 * SASL authentications per listener, as Kafka's socket-server-metrics count them
 * (successful-authentication-total, failed-authentication-total): plain counters the SASL gate
 * increments and server/metrics reads when scraped.
 */
export interface ListenerAuthenticationStats {
  successful: number;
  failed: number;
}

export class SaslAuthenticationStats {
  readonly byListener = new Map<string, ListenerAuthenticationStats>();

  listener(name: string): ListenerAuthenticationStats {
    let s = this.byListener.get(name);
    if (s === undefined) this.byListener.set(name, (s = { successful: 0, failed: 0 }));
    return s;
  }
}
