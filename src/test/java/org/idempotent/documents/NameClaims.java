package org.idempotent.documents;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/** What the documents name in code spans and links: classes and methods, SQL functions, paths, profiles, commands. */
final class NameClaims {

    /** `SomeClass`, `SomeClass.member`, `SomeClass#member()`. */
    private static final Pattern CLASS =
            Pattern.compile("([A-Z][A-Za-z0-9]*)(?:[.#]([A-Za-z_][A-Za-z0-9_]*))?(?:\\(\\))?");

    private static final Pattern TEST_CLASS = Pattern.compile("[A-Z][A-Za-z0-9]*(?:IT|Test)");
    /** A test's sentence of a name, lower camel case of six words or more; shorter ones are JSON fields and options. */
    private static final Pattern TEST_METHOD = Pattern.compile("[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*){5,}");

    private static final Pattern SNAKE = Pattern.compile("[a-z][a-z0-9]*(?:_[a-z0-9]+)+");
    private static final Pattern CALL = Pattern.compile("(?<![\\w.])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)\\(");
    /** A relative path of the repository: segments of word characters, dots and hyphens, no glob, no URL. */
    private static final Pattern PATH = Pattern.compile("([\\w.-]+)(?:/[\\w.-]+)+/?");
    /** Top folders that hold no repository file: what a build or a run makes. */
    private static final Set<String> MADE = Set.of("target");

    private static final Pattern PROFILE = Pattern.compile("(?<![\\w-])-P([a-z][\\w.-]*(?:,[a-z][\\w.-]*)*)");
    private static final Pattern OPERATE = Pattern.compile("\\boperate\\.sh\\s+([a-z][\\w-]*)");

    private NameClaims() {}

    static List<String> missingClasses(List<Document> documents) {
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit span : document.spans()) {
                String text = Document.text(span);
                Matcher name = CLASS.matcher(text);
                if (name.matches()) {
                    String type = name.group(1);
                    String member = name.group(2);
                    boolean test = TEST_CLASS.matcher(type).matches();
                    Optional<String> source = Codebase.sourceOf(type);
                    if (test && member == null && !Codebase.isTestClass(type)) {
                        findings.add(span.at() + ": test class " + type + " is no file of src/test/java");
                    } else if (test && source.isEmpty()) {
                        findings.add(span.at() + ": " + text + ": class " + type + " is in no source folder");
                    } else if (member != null && source.isPresent() && !Codebase.declares(source.get(), member)) {
                        // A class of a library (Connection.isValid) is not the code base's to check.
                        findings.add(span.at() + ": " + text + ": " + type + " declares no " + member);
                    }
                } else if (TEST_METHOD.matcher(text).matches() && !Codebase.hasMethod(text)) {
                    findings.add(span.at() + ": method " + text + " is in no source folder");
                }
            }
        }
        return findings;
    }

    /**
     * A call of a snake-case function of the project's own families (processed_events_..., announcement_...: the first
     * words of the functions the migrations create) must be a function they create; a bare name of those families must
     * at least be a word of the SQL (a table, a column, an index), or a metric (announcement_unsent).
     */
    static List<String> missingSqlNames(List<Document> documents) {
        Set<String> functions = Codebase.sqlFunctions();
        Set<String> words = Codebase.sqlWords();
        Set<String> metrics = Monitoring.metrics();
        Set<String> families =
                functions.stream().map(f -> f.substring(0, f.indexOf('_'))).collect(Collectors.toSet());
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit span : document.spans()) {
                String text = Document.text(span);
                Matcher call = CALL.matcher(text);
                while (call.find()) {
                    String name = call.group(1);
                    if (families.contains(name.substring(0, name.indexOf('_'))) && !functions.contains(name)) {
                        findings.add(span.at() + ": SQL function " + name + " is created by no migration");
                    }
                }
                if (SNAKE.matcher(text).matches()
                        && families.contains(text.substring(0, text.indexOf('_')))
                        && !words.contains(text)
                        && !metrics.contains(text)) {
                    findings.add(span.at() + ": " + text + " is in no migration");
                }
            }
        }
        return findings;
    }

    static List<String> missingPaths(List<Document> documents) {
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit span : document.spans()) {
                for (String word : Document.text(span).split(" ")) {
                    Matcher path = PATH.matcher(word);
                    if (path.matches()
                            && !MADE.contains(path.group(1))
                            && Files.isDirectory(Path.of(path.group(1)))
                            && !Files.exists(Path.of(word))) {
                        findings.add(span.at() + ": " + word + " does not exist");
                    }
                }
            }
        }
        return findings;
    }

    /** Every relative link reaches a file, and its anchor a heading of the page it names. */
    static List<String> brokenLinks(List<Document> documents) {
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            Path folder = Optional.ofNullable(document.path().getParent()).orElse(Path.of(""));
            for (Document.Hit link : document.links()) {
                String target = link.group(1);
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path path =
                        file.isEmpty() ? document.path() : folder.resolve(file).normalize();
                if (!Files.exists(path)) {
                    findings.add(link.at() + ": link " + target + ": " + path + " does not exist");
                } else if (hash >= 0 && path.toString().endsWith(".md")) {
                    Set<String> anchors = (file.isEmpty() ? document : Document.read(path)).anchors();
                    String anchor = target.substring(hash + 1);
                    if (!anchors.contains(anchor)) {
                        findings.add(link.at() + ": link " + target + ": " + path.getFileName() + " has no heading #"
                                + anchor);
                    }
                }
            }
        }
        return findings;
    }

    static List<String> unknownProfiles(List<Document> documents) {
        Set<String> profiles = Codebase.profiles();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit hit : document.findInCode(PROFILE)) {
                for (String profile : hit.group(1).split(",")) {
                    if (!profiles.contains(profile)) {
                        findings.add(hit.at() + ": Maven profile " + profile + " is no profile of pom.xml " + profiles);
                    }
                }
            }
        }
        return findings;
    }

    static List<String> unknownOperatorCommands(List<Document> documents) {
        Set<String> commands = Codebase.operatorCommands();
        List<String> findings = new ArrayList<>();
        for (Document document : documents) {
            for (Document.Hit hit : document.findInCode(OPERATE)) {
                if (!commands.contains(hit.group(1))) {
                    findings.add(hit.at() + ": operate.sh has no command " + hit.group(1) + ", only " + commands);
                }
            }
        }
        return findings;
    }
}
