package org.idempotent.delivery.entity;

import static java.util.Objects.requireNonNull;

/**
 * Thrown by an event type's applier when the event depends on another one that is not applied yet (a refund that
 * arrives before its payment): its transaction rolls back, and the delivery hands the broker a copy to deliver again
 * after a back-off, until the delivery budget is spent; then it is dead-lettered with {@link #ifGivenUp}. Neither
 * applied nor lost.
 */
public class NotYetApplicable extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient Rejection ifGivenUp;

    public NotYetApplicable(Rejection ifGivenUp) {
        super(ifGivenUp.toString(), null, false, false);
        this.ifGivenUp = ifGivenUp;
    }

    /** The reason the message is dead-lettered with once it has been delivered as often as the budget allows. */
    public Rejection ifGivenUp() {
        return requireNonNull(ifGivenUp);
    }
}
