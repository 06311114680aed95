package org.idempotent.announcement.control;

import jakarta.ejb.Stateless;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import java.util.List;
import java.util.UUID;
import org.idempotent.announcement.entity.Announcement;

/** The outbox as the admin API sees it: an event's announcement, and re-announcement of an account's payments. */
@Stateless
public class Announcements {

    /**
     * Unsent again, with a new generation (a new duplicate-detection ID, or the broker would drop the copies as
     * resends). Sent rows only: an unsent one goes out anyway.
     */
    static final String REANNOUNCE = """
            UPDATE payment_announcements SET sent_at = NULL, generation = generation + 1
             WHERE account_id = ?1 AND account_sequence >= ?2 AND sent_at IS NOT NULL""";

    @PersistenceContext
    EntityManager em;

    /** Usually one; more if the event was forgotten and applied again (each application is announced). */
    public List<Announcement> ofEvent(UUID eventId) {
        return em.createQuery(
                        "SELECT a FROM Announcement a WHERE a.eventId = :eventId ORDER BY a.sequence",
                        Announcement.class)
                .setParameter("eventId", eventId)
                .getResultList();
    }

    /** The lowest sequence number of the account still in the outbox (older rows are purged); null if none is. */
    public Long oldestRetained(String accountId) {
        return em.createQuery("SELECT min(a.sequence) FROM Announcement a WHERE a.accountId = :accountId", Long.class)
                .setParameter("accountId", accountId)
                .getSingleResult();
    }

    /** Publishes again, in order, every retained announcement of the account from {@code fromSequence} on. */
    public int reannounce(String accountId, long fromSequence) {
        return em.createNativeQuery(REANNOUNCE)
                .setParameter(1, accountId)
                .setParameter(2, fromSequence)
                .executeUpdate();
    }
}
