package org.idempotent.documents;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.IntSupplier;
import java.util.regex.Pattern;

/**
 * A number right before a noun the code can count: "eighteen alerts", "20 panels", "two layouts". Only plural nouns
 * directly after the number and not followed by "of" (a share of them, "two alerts of the twenty", is no total).
 */
final class CountClaims {

    private static final List<String> WORDS = List.of(
            "zero",
            "one",
            "two",
            "three",
            "four",
            "five",
            "six",
            "seven",
            "eight",
            "nine",
            "ten",
            "eleven",
            "twelve",
            "thirteen",
            "fourteen",
            "fifteen",
            "sixteen",
            "seventeen",
            "eighteen",
            "nineteen",
            "twenty");

    /** What each noun counts, and where. */
    private static final Map<String, IntSupplier> COUNTED = Map.of(
            "alerts",
            () -> Monitoring.alerts().size(),
            "panels",
            () -> Monitoring.panelTitles().size(),
            "layouts",
            Codebase::layouts,
            "migrations",
            Codebase::migrations);

    private static final Map<String, String> WHERE = Map.of(
            "alerts", Monitoring.RULES.toString(),
            "panels", Monitoring.DASHBOARD.toString(),
            "layouts", "DedupLayout",
            "migrations", Codebase.MIGRATIONS.toString());

    private static final Pattern COUNT = Pattern.compile(
            "(?i)\\b(" + String.join("|", WORDS) + "|\\d+) (" + String.join("|", COUNTED.keySet()) + ")\\b(?! of\\b)");

    private CountClaims() {}

    static List<String> wrongCounts(List<Document> documents) {
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit hit : document.find(COUNT)) {
                String noun = hit.group(2).toLowerCase(Locale.ROOT);
                String number = hit.group(1).toLowerCase(Locale.ROOT);
                int said = number.matches("\\d+") ? Integer.parseInt(number) : WORDS.indexOf(number);
                int counted = COUNTED.get(noun).getAsInt();
                if (said != counted) {
                    findings.add(hit.at() + ": " + WHERE.get(noun) + " has " + counted + " " + noun
                            + ", the document says " + hit.group(1));
                }
            }
        }
        return findings;
    }
}
