package org.idempotent.announcement.boundary;

import jakarta.annotation.PostConstruct;
import jakarta.ejb.ConcurrencyManagement;
import jakarta.ejb.ConcurrencyManagementType;
import jakarta.ejb.DependsOn;
import jakarta.ejb.Schedule;
import jakarta.ejb.Singleton;
import jakarta.ejb.Startup;
import jakarta.ejb.TransactionAttribute;
import jakarta.ejb.TransactionAttributeType;
import jakarta.inject.Inject;
import org.idempotent.announcement.control.Relay;

/**
 * The relay's safety net: every instance wakes it every few seconds, for rows whose own instance died before relaying
 * them, rows another instance committed while this one held the lock, and retries after a broker outage; and purges
 * sent announcements. Non-persistent, like the retention timer: a missed tick is simply the next one. No transaction:
 * the relay uses its connections in autocommit, under an advisory lock.
 */
@Startup
@Singleton
@DependsOn("SchemaMigration")
@ConcurrencyManagement(ConcurrencyManagementType.BEAN)
@TransactionAttribute(TransactionAttributeType.NOT_SUPPORTED)
public class RelayTimer {

    @Inject
    Relay relay;

    @PostConstruct
    void start() {
        relay.wake();
    }

    @Schedule(hour = "*", minute = "*", second = "*/5", persistent = false, info = "announcement relay")
    void tick() {
        relay.wake();
    }

    @Schedule(hour = "*", minute = "*/10", persistent = false, info = "sent announcement purge")
    void purge() {
        relay.purgeSent();
    }
}
