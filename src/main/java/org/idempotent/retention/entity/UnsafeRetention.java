package org.idempotent.retention.entity;

/** The retention configuration could let a late duplicate through, or is invalid: the purge does not run. */
public class UnsafeRetention extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public UnsafeRetention(String message) {
        super(message);
    }
}
