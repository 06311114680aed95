package org.idempotent.documents;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/** The commits the documents cite (a measurement's code, a run's clean clone) and whether the history has them. */
final class Commits {

    /**
     * A short or full hash standing alone: 7 to 40 hex digits with a digit and a letter among them (so no number, and
     * no word such as "defaced"), not part of a UUID, a file name (war-0e80dec.war) or a hex literal (0x...).
     */
    static final Pattern HASH =
            Pattern.compile("(?<![\\w-])(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?![\\w-])");

    private Commits() {}

    static boolean haveHistory() {
        return Files.exists(Path.of(".git"));
    }

    static List<String> missing(List<Document> documents) throws IOException, InterruptedException {
        List<Document.Hit> cited = documents.stream()
                .flatMap(document -> document.find(HASH).stream())
                .toList();
        Set<String> unknown =
                unknown(cited.stream().map(hit -> hit.group(0)).collect(LinkedHashSet::new, Set::add, Set::addAll));
        List<String> findings = new ArrayList<>();
        for (Document.Hit hit : cited) {
            if (unknown.contains(hit.group(0))) {
                findings.add(hit.at() + ": commit " + hit.group(0) + " is not in the git history");
            }
        }
        return findings;
    }

    /** One git process for every hash: its batch check answers "<hash>^{commit} missing" for each it lacks. */
    private static Set<String> unknown(Set<String> hashes) throws IOException, InterruptedException {
        Process git = new ProcessBuilder("git", "cat-file", "--batch-check")
                .redirectError(ProcessBuilder.Redirect.INHERIT)
                .start();
        try (Writer input = git.outputWriter(StandardCharsets.UTF_8)) {
            for (String hash : hashes) {
                input.write(hash + "^{commit}\n");
            }
        }
        Set<String> unknown = new LinkedHashSet<>();
        for (String line : new String(git.getInputStream().readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
            if (line.endsWith(" missing") || line.endsWith(" ambiguous")) {
                unknown.add(line.substring(0, line.indexOf('^')));
            }
        }
        if (git.waitFor() != 0) {
            throw new IllegalStateException("git cat-file --batch-check ended with " + git.exitValue());
        }
        return unknown;
    }
}
