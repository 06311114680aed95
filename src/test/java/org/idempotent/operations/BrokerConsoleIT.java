package org.idempotent.operations;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import jakarta.jms.Connection;
import jakarta.jms.JMSException;
import jakarta.jms.MessageProducer;
import jakarta.jms.Session;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.activemq.artemis.jms.client.ActiveMQConnectionFactory;
import org.idempotent.fixtures.HeadlessChromium;
import org.idempotent.stack.BrokerProcess;
import org.idempotent.stack.Commands;
import org.idempotent.stack.Settings;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;

/**
 * The broker's web console, as an operator meets it in a browser: on loopback, behind the operator's login, showing
 * the payments queues with their message counts (screenshot under target/screenshots). A broker of its own, so that
 * the counts are this test's (a refused login changes none of them, so both tests share it).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class BrokerConsoleIT {

    private Settings settings;
    private BrokerProcess broker;

    @BeforeAll
    void startBroker() throws Exception {
        settings = freshBroker("target/console-it");
        broker = BrokerProcess.start(settings, false);
        send(settings, Map.of("payments.dlq", 3, "payments.conflicts", 2));
    }

    @AfterAll
    void stopBroker() {
        if (broker != null) {
            broker.close();
        }
    }

    @Test
    void theOperatorLogsInAndFindsThePaymentsQueuesWithTheirCounts() throws Exception {
        WebDriver browser = HeadlessChromium.start();
        try {
            String console = "http://127.0.0.1:" + settings.get("BROKER_CONSOLE_PORT") + "/console";
            openLoginPage(browser, console);
            HeadlessChromium.screenshot(browser, "broker-console-login");
            browser.findElement(By.id("pf-login-username-id")).sendKeys(settings.get("BROKER_OPERATOR_USER"));
            browser.findElement(By.id("pf-login-password-id")).sendKeys(settings.get("BROKER_OPERATOR_PASSWORD"));
            browser.findElement(By.cssSelector("button[type=submit]")).click();
            await().atMost(Duration.ofSeconds(30)).ignoreExceptions().until(() -> {
                browser.findElement(By.xpath("//button[normalize-space()='Queues']"))
                        .click();
                return queueCounts(browser).containsKey("payments.quarantine");
            });
            HeadlessChromium.screenshot(browser, "broker-console-queues");

            assertThat(queueCounts(browser))
                    .containsEntry("payments", "0")
                    .containsEntry("payments.dlq", "3")
                    .containsEntry("payments.conflicts", "2")
                    .containsEntry("payments.quarantine", "0");
        } finally {
            browser.quit();
        }
    }

    @Test
    void aProducerCannotLogIntoTheConsole() throws Exception {
        WebDriver browser = HeadlessChromium.start();
        try {
            String console = "http://127.0.0.1:" + settings.get("BROKER_CONSOLE_PORT") + "/console";
            openLoginPage(browser, console);
            browser.findElement(By.id("pf-login-username-id")).sendKeys(settings.get("BROKER_PRODUCER_USER"));
            browser.findElement(By.id("pf-login-password-id")).sendKeys(settings.get("BROKER_PRODUCER_PASSWORD"));
            browser.findElement(By.cssSelector("button[type=submit]")).click();

            // Refused: the console says so, the login form stays, and no queue view opens.
            await().atMost(Duration.ofSeconds(10))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> browser.getPageSource().contains("Invalid login credentials"));
            HeadlessChromium.screenshot(browser, "broker-console-producer-refused");
            assertThat(browser.findElements(By.id("pf-login-username-id"))).isNotEmpty();
            assertThat(browser.findElements(By.xpath("//button[normalize-space()='Queues']")))
                    .isEmpty();
        } finally {
            browser.quit();
        }
    }

    /** Settings for a broker of this test's own: its directory emptied, ports free. */
    private static Settings freshBroker(String dir) throws IOException {
        Settings settings = Settings.fromEnvironment().with("STACK_DIR", dir).withFreeBrokerPorts();
        Commands.deleteRecursively(settings.stackDir());
        return settings;
    }

    /** The console's web application answers a moment after the broker's port, then renders its login form. */
    private static void openLoginPage(WebDriver browser, String console) {
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions()
                .until(() -> {
                    browser.get(console);
                    return true;
                });
        await().atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(250))
                .until(() ->
                        !browser.findElements(By.id("pf-login-username-id")).isEmpty());
    }

    /** Queue name to the "Message Count" column, from the Queues tab's table. */
    private static Map<String, String> queueCounts(WebDriver browser) {
        List<String> headers = browser.findElements(By.cssSelector("thead th")).stream()
                .map(WebElement::getText)
                .toList();
        int name = headers.indexOf("Name");
        int count = headers.indexOf("Message Count");
        return browser.findElements(By.cssSelector("tbody tr")).stream()
                .map(row -> row.findElements(By.tagName("td")).stream()
                        .map(WebElement::getText)
                        .toList())
                .filter(cells -> cells.size() > Math.max(name, count))
                .collect(Collectors.toMap(cells -> cells.get(name), cells -> cells.get(count), (a, b) -> a));
    }

    private static void send(Settings settings, Map<String, Integer> counts) throws JMSException {
        try (Connection connection = new ActiveMQConnectionFactory(
                        settings.brokerUrl(),
                        settings.get("BROKER_OPERATOR_USER"),
                        settings.get("BROKER_OPERATOR_PASSWORD"))
                .createConnection()) {
            Session session = connection.createSession(false, Session.AUTO_ACKNOWLEDGE);
            for (Map.Entry<String, Integer> queue : counts.entrySet()) {
                MessageProducer producer = session.createProducer(session.createQueue(queue.getKey()));
                for (int i = 0; i < queue.getValue(); i++) {
                    producer.send(session.createTextMessage("{}"));
                }
            }
        }
    }
}
