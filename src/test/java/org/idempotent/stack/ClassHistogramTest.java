package org.idempotent.stack;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The live objects per class as jcmd prints them, and what a load left behind. */
class ClassHistogramTest {

    private static final String BEFORE = """
            12242:
             num     #instances         #bytes  class name (module)
            -------------------------------------------------------
               1:        123456        7890123  [B (java.base@17.0.15)
               2:            39           2184  org.jboss.weld.contexts.CreationalContextImpl
               3:             5            160  org.example.Twice
               4:             2             64  org.example.Twice
            Total        123502        7892531
            """;

    private static final String AFTER = """
               1:        123450        7890000  [B (java.base@17.0.15)
               2:           533          29848  org.jboss.weld.contexts.CreationalContextImpl
               3:             1             16  org.example.New
            Total        123984        7919864
            """;

    @Test
    void growthIsPerClassLargestFirstAndCountsClassesThatCameOrWent() {
        ClassHistogram before = ClassHistogram.parse(BEFORE);
        ClassHistogram after = ClassHistogram.parse(AFTER);

        assertThat(before.growthTo(after))
                .containsExactly(
                        new ClassHistogram.Growth("org.jboss.weld.contexts.CreationalContextImpl", 494, 27664),
                        new ClassHistogram.Growth("org.example.New", 1, 16),
                        new ClassHistogram.Growth("[B", -6, -123),
                        new ClassHistogram.Growth("org.example.Twice", -7, -224));
    }

    @Test
    void aClassOfTwoLoadersIsOneClassAndTheLiveHeapIsEveryRowAddedUp() {
        ClassHistogram before = ClassHistogram.parse(BEFORE);

        assertThat(before.instances("org.example.Twice")).isEqualTo(7);
        assertThat(before.instances("org.example.Absent")).isZero();
        assertThat(before.bytes()).isEqualTo(7_892_531);
    }

    @Test
    void theCollectorsFillerInDeadSpaceIsNoLiveObject() {
        ClassHistogram withFiller = ClassHistogram.parse("""
                   1:        123456        7890123  [B (java.base@25.0.3)
                   2:           184         205648  [Ljdk.internal.vm.FillerElement; (java.base@25.0.3)
                   3:             3             48  jdk.internal.vm.FillerObject (java.base@25.0.3)
                """);

        assertThat(withFiller.growthTo(ClassHistogram.parse("   1:        123456        7890123  [B\n")))
                .containsExactly(new ClassHistogram.Growth("[B", 0, 0));
        assertThat(withFiller.bytes()).isEqualTo(7_890_123);
    }

    @Test
    void outputWithoutRowsIsRefused() {
        assertThatThrownBy(() -> ClassHistogram.parse("12242:\nNo such process\n"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("not a class histogram");
    }
}
