package org.idempotent.documents;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The documents (README.md and src/site/markdown) held to the code: what they name exists, and what they state of a
 * default, an alert, a count or a commit is what the code says. Each finding gives the document's line and what the
 * code says instead. Only clearly marked claims are read (names in code spans, links, tables with a known header, a
 * number right before a counted noun): prose the checks cannot read mechanically is left alone rather than misread.
 */
class DocumentsTest {

    private static final List<Document> DOCUMENTS = Document.all();

    @Test
    void everySettingADocumentNamesIsAKeyOfTheConfiguration() {
        assertNone("settings the documents name", SettingClaims.unknownSettings(DOCUMENTS));
    }

    @Test
    void everyDefaultADocumentGivesIsTheOneOfTheConfiguration() {
        assertNone("defaults the documents give", SettingClaims.wrongDefaults(DOCUMENTS));
    }

    @Test
    void everySettingAScriptReadsIsAKeyOfTheConfiguration() {
        assertNone("environment the scripts and the post-boot commands read", SettingClaims.unknownReads());
    }

    @Test
    void everyClassAndMethodADocumentNamesExists() {
        assertNone("classes and methods the documents name", NameClaims.missingClasses(DOCUMENTS));
    }

    @Test
    void everySqlFunctionADocumentCallsIsCreatedByAMigration() {
        assertNone("SQL names the documents use", NameClaims.missingSqlNames(DOCUMENTS));
    }

    @Test
    void everyRepositoryPathADocumentNamesExists() {
        assertNone("paths the documents name", NameClaims.missingPaths(DOCUMENTS));
    }

    @Test
    void everyLinkReachesAFileAndItsAnchorAHeading() {
        assertNone("links of the documents", NameClaims.brokenLinks(DOCUMENTS));
    }

    @Test
    void everyMavenProfileAndOperatorCommandADocumentRunsExists() {
        assertNone(
                "profiles and operate.sh commands the documents run",
                concat(NameClaims.unknownProfiles(DOCUMENTS), NameClaims.unknownOperatorCommands(DOCUMENTS)));
    }

    @Test
    void everyMetricADocumentNamesIsExportedOrRead() {
        assertNone("metrics the documents name", MonitoringClaims.unknownMetrics(DOCUMENTS));
    }

    @Test
    void everyAlertADocumentNamesIsARuleWithItsDurationAndSeverity() {
        assertNone("alerts the documents name", MonitoringClaims.unknownAlerts(DOCUMENTS));
    }

    @Test
    void everyAlertHasItsRunbookSectionAndRowInOperations() {
        assertNone("alerts without a runbook", MonitoringClaims.missingRunbooks(DOCUMENTS));
    }

    @Test
    void everyDashboardPanelADocumentListsExistsAndEveryPanelIsListed() {
        assertNone("panels the documents list", MonitoringClaims.unknownPanels(DOCUMENTS));
    }

    @Test
    void everyCountADocumentStatesIsTheCodesCount() {
        assertNone("counts the documents state", CountClaims.wrongCounts(DOCUMENTS));
    }

    @Test
    void everyCommitADocumentCitesIsInTheHistory() throws IOException, InterruptedException {
        assumeTrue(Commits.haveHistory(), "a checkout without .git: no history to find the commits in");
        assertNone("commits the documents cite", Commits.missing(DOCUMENTS));
    }

    private static void assertNone(String what, List<String> findings) {
        assertThat(findings)
                .withFailMessage(() -> findings.size() + " " + what + " that the code contradicts:\n  "
                        + String.join("\n  ", findings))
                .isEmpty();
    }

    private static List<String> concat(List<String> first, List<String> second) {
        return Stream.concat(first.stream(), second.stream()).toList();
    }
}
