package org.idempotent.schema.entity;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.Map;

/**
 * How processed_events is laid out, as {@code DEDUP_PARTITIONING} names it when a schema is installed and as the
 * catalog says afterwards: the setting chooses the layout of a new install only, and an installed table keeps its own
 * until its owner converts it (operations.md).
 */
public enum DedupLayout {
    /** One table whose expired rows the purge deletes in batches. */
    NONE,
    /**
     * Partitioned by the event ID: a UTC day of v7 IDs per partition, every other version in one table (V12). A copy
     * has its original's ID and so lands in its partition: the primary key alone decides.
     */
    ID;

    /**
     * How much longer than the window a record may stay: the row-by-row purge deletes each record once it expires, the
     * table by ID drops a day once the window has passed its end.
     */
    public Duration granule() {
        return switch (this) {
            case NONE -> Duration.ZERO;
            case ID -> Duration.ofDays(1);
        };
    }

    /** The value of {@code DEDUP_PARTITIONING} that installs it. */
    public String setting() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * @throws IllegalArgumentException naming the values there are, if {@code setting} is none of them; for the retired
     *     {@code week}, saying what becomes of a table by week
     */
    public static DedupLayout of(String setting) {
        if ("week".equals(setting)) {
            throw new IllegalArgumentException("DEDUP_PARTITIONING=week is retired: set none or id, and an installed "
                    + "table by week is converted to it when the schema is migrated (V14__dedup_week_retired.sql)");
        }
        return Arrays.stream(values())
                .filter(layout -> layout.setting().equals(setting))
                .findFirst()
                .orElseThrow(() ->
                        new IllegalArgumentException("DEDUP_PARTITIONING=" + setting + " is neither none nor id"));
    }

    /**
     * The migrations' placeholders: V8 (the retired table by week) installs nothing by week any more, so it is told
     * none; V12 (a new install by ID) and V14 (the conversion of a table by week) are told the layout itself.
     */
    public Map<String, String> placeholders() {
        return Map.of("dedupPartitioning", "none", "dedupLayout", setting());
    }

    /** How the catalog says it: a table not partitioned, or by list (of the ID's version). */
    public static DedupLayout ofPartitionStrategy(String strategy) {
        if (strategy == null) {
            return NONE;
        }
        return switch (strategy) {
            case "l" -> ID;
            default ->
                throw new IllegalStateException(
                        "processed_events is partitioned by " + strategy + ", a layout this version does not know");
        };
    }

    /** As the startup log and the warnings say it. */
    public String description() {
        return switch (this) {
            case NONE -> "not partitioned";
            case ID -> "partitioned by event ID (a day of v7 IDs per partition)";
        };
    }
}
