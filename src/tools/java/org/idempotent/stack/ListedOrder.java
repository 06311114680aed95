package org.idempotent.stack;

import org.apache.activemq.artemis.api.core.client.loadbalance.ConnectionLoadBalancingPolicy;

/**
 * The Artemis client's choice of connector in the order the URL lists them: the first, then the next when it does not
 * answer. The client's default starts at a random one, so four producers all landed on one node of a cluster about one
 * time in eight, and the other node had nothing to deliver. Named by its class in a URL
 * ({@link Settings#brokerHaUrlListing}); one instance per client, so no state is shared.
 */
public final class ListedOrder implements ConnectionLoadBalancingPolicy {

    private int next;

    @Override
    public int select(int max) {
        int selected = next % max;
        next = selected + 1;
        return selected;
    }
}
