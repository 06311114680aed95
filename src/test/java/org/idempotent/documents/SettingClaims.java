package org.idempotent.documents;

import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the documents say of the settings: each upper-snake name in a code span whose first word is a key's (DB_,
 * BROKER_, RETENTION_ ...) is a key, and a default given right after it is the one written for it.
 */
final class SettingClaims {

    static final Pattern UPPER_SNAKE =
            Pattern.compile("(?<![A-Za-z0-9_])[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+(?![A-Za-z0-9_])");

    private static final String NAME = "`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`";
    /** `NAME` (default `value`: ... or `NAME` (`value`) ... : a value in a code span right after the name. */
    private static final Pattern QUOTED_DEFAULT = Pattern.compile(NAME + " \\((?:default:? )?`([^`]+)`(?=[):;])");
    /** `NAME` (default value) ... with a bare word. */
    private static final Pattern WORD_DEFAULT = Pattern.compile(NAME + " \\(default:? ([\\w./-]+)(?=[),;:])");
    /** `NAME` (4 s) ..., `NAME`, 4 s (..., `NAME` (19 by default: ... : a number, its unit, and nothing more. */
    private static final Pattern NUMBER_DEFAULT = Pattern.compile(NAME
            + "(?:, | \\()(\\d{1,3}(?:,\\d{3})+|\\d+(?:\\.\\d+)?)(?: ?(ms|s|seconds?|minutes?|hours?|days?))?"
            + "(?: by default)?(?=\\s*[);:(|])");

    private static final Pattern NUMBER_WRITTEN = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s)?");

    private SettingClaims() {}

    static List<String> unknownSettings(List<Document> documents) {
        Map<String, String> defaults = Configuration.defaults();
        Set<String> families = Configuration.families();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit span : document.spans()) {
                Matcher name = UPPER_SNAKE.matcher(Document.text(span));
                while (name.find()) {
                    String setting = name.group();
                    if (families.contains(setting.substring(0, setting.indexOf('_')))
                            && !defaults.containsKey(setting)
                            && !Configuration.NOT_SETTINGS.containsKey(setting)) {
                        findings.add(span.at() + ": setting " + setting + " is no key of configuration.properties");
                    }
                }
            }
        }
        return findings;
    }

    static List<String> wrongDefaults(List<Document> documents) {
        Map<String, String> defaults = Configuration.defaults();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Pattern form : List.of(QUOTED_DEFAULT, WORD_DEFAULT)) {
                for (Document.Hit hit : document.find(form)) {
                    String written = defaults.get(hit.group(1));
                    if (written != null && !written.equals(hit.group(2))) {
                        findings.add(differs(hit, written, hit.group(2)));
                    }
                }
            }
            for (Document.Hit hit : document.find(NUMBER_DEFAULT)) {
                String written = defaults.get(hit.group(1));
                if (written != null && !sameQuantity(hit.group(1), written, hit.group(2), hit.group(3))) {
                    String unit = hit.group(3) == null ? "" : " " + hit.group(3);
                    findings.add(differs(hit, written, hit.group(2) + unit));
                }
            }
        }
        return findings;
    }

    /** "file: NAME" of every name a script or the post-boot commands read that is neither a key nor listed as none. */
    static List<String> unknownReads() {
        Map<String, String> defaults = Configuration.defaults();
        return Configuration.readsByFile().stream()
                .filter(read -> {
                    String name = read.substring(read.lastIndexOf(' ') + 1);
                    return !defaults.containsKey(name) && !Configuration.NOT_SETTINGS.containsKey(name);
                })
                .map(read -> read.replace(": ", " reads ") + ", no key of configuration.properties")
                .toList();
    }

    private static String differs(Document.Hit hit, String written, String said) {
        return hit.at() + ": setting " + hit.group(1) + " has default " + (written.isEmpty() ? "(empty)" : written)
                + " in configuration.properties, the document says " + said;
    }

    /**
     * The document's number in its unit against the written one: in seconds where both carry a unit (a name ending in
     * _SECONDS or _DAYS, a value like 3s), as numbers otherwise (4 s for DB_SOCKET_TIMEOUT=4).
     */
    private static boolean sameQuantity(String name, String written, String number, String unit) {
        Matcher value = NUMBER_WRITTEN.matcher(written);
        if (!value.matches()) {
            return false;
        }
        BigDecimal said = new BigDecimal(number.replace(",", ""));
        BigDecimal given = new BigDecimal(value.group(1));
        String writtenUnit = value.group(2) != null ? value.group(2) : unitOf(name);
        if (unit != null && writtenUnit != null) {
            return said.multiply(milliseconds(unit)).compareTo(given.multiply(milliseconds(writtenUnit))) == 0;
        }
        return said.compareTo(given) == 0;
    }

    private static BigDecimal milliseconds(String unit) {
        return BigDecimal.valueOf(
                switch (unit) {
                    case "ms" -> 1;
                    case "s", "second", "seconds" -> 1_000;
                    case "minute", "minutes" -> 60_000;
                    case "hour", "hours" -> 3_600_000;
                    default -> 86_400_000;
                });
    }

    /** The unit a key's name gives its value: RETENTION_DAYS in days, CONSUMER_STUCK_SECONDS in seconds. */
    private static String unitOf(String name) {
        return name.endsWith("_SECONDS") ? "s" : name.endsWith("_DAYS") ? "days" : name.endsWith("_MS") ? "ms" : null;
    }
}
