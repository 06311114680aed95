package org.idempotent.documents;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.MatchResult;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * One markdown document as the checks read it. Fenced blocks are blanked out of its prose (a shell session or a sample
 * body is not a claim about names), with their line breaks kept so that every match keeps its line number.
 */
record Document(Path path, String raw, String prose) {

    static final Path SITE = Path.of("src", "site", "markdown");

    private static final Pattern FENCE = Pattern.compile("(?ms)^ *```.*?^ *```[^\\n]*$");
    /** A code span ends within its paragraph: an unpaired backtick must not swallow the rest of the document. */
    private static final Pattern SPAN = Pattern.compile("`((?:[^`\\n]|\\n(?![ \\t]*\\n))+)`");

    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("(?m)^#{1,6} +(.+?) *#*$");

    /** A match and where it is: the document and the line it begins on. */
    record Hit(Document document, int line, MatchResult match) {

        String at() {
            return document.name() + ":" + line;
        }

        String group(int group) {
            return match.group(group);
        }
    }

    /** The README and the site's pages, in a stable order. */
    static List<Document> all() {
        List<Path> paths = new ArrayList<>(List.of(Path.of("README.md")));
        try (Stream<Path> site = Files.list(SITE)) {
            site.filter(p -> p.toString().endsWith(".md")).sorted().forEach(paths::add);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return paths.stream().map(Document::read).toList();
    }

    static Document read(Path path) {
        try {
            String raw = Files.readString(path);
            return new Document(path, raw, blank(raw, FENCE));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    String name() {
        return path.getFileName().toString();
    }

    /** Matches in the prose, code spans included. */
    List<Hit> find(Pattern pattern) {
        return find(pattern, prose);
    }

    /** Matches that begin in code, a span or a fenced block: the commands an operator runs as written. */
    List<Hit> findInCode(Pattern pattern) {
        boolean[] code = new boolean[raw.length()];
        for (Matcher m : List.of(FENCE.matcher(raw), SPAN.matcher(prose))) {
            while (m.find()) {
                Arrays.fill(code, m.start(), m.end(), true);
            }
        }
        return find(pattern, raw).stream()
                .filter(hit -> code[hit.match().start()])
                .toList();
    }

    /** The code spans, each as its text (a span broken over two lines joined by a space) and the line it opens on. */
    List<Hit> spans() {
        return find(SPAN);
    }

    static String text(Hit span) {
        return span.group(1).replaceAll("\\s*\\n\\s*", " ");
    }

    /** Relative and same-page links, outside code spans. */
    List<Hit> links() {
        return find(LINK, blank(prose, SPAN)).stream()
                .filter(link -> !link.group(1).matches("[a-z]+:.*"))
                .toList();
    }

    /** GitHub's anchors of the headings: lower case, punctuation dropped, spaces as hyphens, a repeat numbered. */
    Set<String> anchors() {
        Set<String> anchors = new LinkedHashSet<>();
        Matcher heading = HEADING.matcher(prose);
        while (heading.find()) {
            String text = heading.group(1).replaceAll("\\[([^\\]]*)]\\([^)]*\\)", "$1");
            String slug = text.toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            String unique = slug;
            for (int n = 1; !anchors.add(unique); n++) {
                unique = slug + "-" + n;
            }
        }
        return anchors;
    }

    private List<Hit> find(Pattern pattern, String text) {
        List<Hit> hits = new ArrayList<>();
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            hits.add(new Hit(this, lineOf(m.start()), m.toMatchResult()));
        }
        return hits;
    }

    private int lineOf(int offset) {
        int line = 1;
        for (int i = 0; i < offset; i++) {
            if (raw.charAt(i) == '\n') {
                line++;
            }
        }
        return line;
    }

    /** The text with every match replaced by spaces, line breaks kept. */
    private static String blank(String text, Pattern pattern) {
        StringBuilder blanked = new StringBuilder(text);
        Matcher m = pattern.matcher(text);
        while (m.find()) {
            for (int i = m.start(); i < m.end(); i++) {
                if (blanked.charAt(i) != '\n') {
                    blanked.setCharAt(i, ' ');
                }
            }
        }
        return blanked.toString();
    }
}
