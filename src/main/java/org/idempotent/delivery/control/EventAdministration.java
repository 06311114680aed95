package org.idempotent.delivery.control;

import jakarta.annotation.Resource;
import jakarta.ejb.SessionContext;
import jakarta.ejb.Stateless;
import jakarta.persistence.EntityManager;
import jakarta.persistence.LockModeType;
import jakarta.persistence.PersistenceContext;
import java.util.List;
import java.util.Optional;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.idempotent.delivery.entity.ForgottenEvent;
import org.idempotent.delivery.entity.ProcessedEvent;
import org.idempotent.delivery.entity.ReleasedEvent;

/**
 * An administrator's view of the dedup records: look one up, forget one so that a replay is applied again, or
 * release a quarantined stale event so that it is applied (the dedup insert still guards it).
 */
@Stateless
public class EventAdministration {

    /** The second guard would refuse the replay if the event is still the last one applied to its account. */
    static final String RELEASE_GUARD = "UPDATE accounts SET last_event_id = NULL WHERE last_event_id = ?1";

    private static final Logger LOG = Logger.getLogger(EventAdministration.class.getName());

    @PersistenceContext
    EntityManager em;

    @Resource
    SessionContext context;

    public List<ForgottenEvent> forgotten(UUID eventId) {
        return em.createQuery(
                        "SELECT f FROM ForgottenEvent f WHERE f.eventId = :eventId ORDER BY f.id", ForgottenEvent.class)
                .setParameter("eventId", eventId)
                .getResultList();
    }

    /**
     * Removes the event's dedup record and releases the guard on its account, so that the next delivery of this event
     * is applied again; records who did it and why, all in one transaction. Empty if the event is not recorded.
     * The caller is the authenticated administrator, as the container knows them.
     */
    public Optional<ForgottenEvent> forget(UUID eventId, String reason) {
        ProcessedEvent record = em.find(ProcessedEvent.class, eventId, LockModeType.PESSIMISTIC_WRITE);
        if (record == null) {
            return Optional.empty();
        }
        em.remove(record);
        int released =
                em.createNativeQuery(RELEASE_GUARD).setParameter(1, eventId).executeUpdate();
        ForgottenEvent audit =
                new ForgottenEvent(record, context.getCallerPrincipal().getName(), reason, released > 0);
        em.persist(audit);
        em.flush();
        em.refresh(audit);
        LOG.log(
                Level.WARNING,
                "Event {0} forgotten by {1} ({2}): its next delivery will be applied again",
                new Object[] {eventId, audit.forgottenBy(), reason});
        return Optional.of(audit);
    }

    public List<ReleasedEvent> releases(UUID eventId) {
        return em.createQuery(
                        "SELECT r FROM ReleasedEvent r WHERE r.eventId = :eventId ORDER BY r.id", ReleasedEvent.class)
                .setParameter("eventId", eventId)
                .getResultList();
    }

    /**
     * Records that the caller released the event from quarantine: from now on a stale delivery of it is applied
     * unless its dedup record exists. Moving the message back is the caller's next step, after this commits.
     */
    public ReleasedEvent release(UUID eventId, String reason) {
        ReleasedEvent audit =
                new ReleasedEvent(eventId, context.getCallerPrincipal().getName(), reason);
        em.persist(audit);
        em.flush();
        em.refresh(audit);
        LOG.log(
                Level.WARNING,
                "Event {0} released from quarantine by {1} ({2}): its stale delivery will be applied",
                new Object[] {eventId, audit.releasedBy(), reason});
        return audit;
    }
}
