package org.idempotent.security;

import static org.assertj.core.api.Assertions.assertThat;

import jakarta.annotation.security.PermitAll;
import jakarta.annotation.security.RolesAllowed;
import jakarta.ws.rs.Path;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.idempotent.AdminApi;
import org.junit.jupiter.api.Test;

/** Every resource under api/admin needs the administrator role, twice over: web.xml and the resource class. */
class AdminEndpointsTest {

    @Test
    void everyAdminResourceRequiresTheAdministratorRole() throws Exception {
        List<Class<?>> admin = new ArrayList<>();
        for (Class<?> resource : resources()) {
            if (resource.getAnnotation(Path.class).value().startsWith("admin")) {
                admin.add(resource);
                RolesAllowed roles = resource.getAnnotation(RolesAllowed.class);
                assertThat(roles)
                        .as("%s has @RolesAllowed", resource.getSimpleName())
                        .isNotNull();
                assertThat(roles.value()).as(resource.getSimpleName()).containsExactly(AdminApi.ROLE);
                for (Method method : resource.getDeclaredMethods()) {
                    assertThat(method.getAnnotation(PermitAll.class))
                            .as(method.toString())
                            .isNull();
                }
            }
        }

        assertThat(admin)
                .extracting(Class::getSimpleName)
                .contains("RetentionResource", "EventAdministrationResource", "StatisticsResource");
    }

    @Test
    void webXmlRequiresTheRoleForTheWholeAdminPath() throws IOException {
        String webXml = Files.readString(java.nio.file.Path.of("src/main/webapp/WEB-INF/web.xml"));

        assertThat(webXml)
                .containsPattern("<url-pattern>/api/admin/\\*</url-pattern>\\s*</web-resource-collection>\\s*"
                        + "<auth-constraint>\\s*<role-name>" + AdminApi.ROLE + "</role-name>");
        assertThat(webXml).doesNotContain("<http-method>");
    }

    private static List<Class<?>> resources() throws IOException, ClassNotFoundException {
        java.nio.file.Path classes = java.nio.file.Path.of("target", "classes");
        List<Class<?>> resources = new ArrayList<>();
        try (Stream<java.nio.file.Path> files = Files.walk(classes)) {
            for (java.nio.file.Path file :
                    files.filter(f -> f.toString().endsWith(".class")).toList()) {
                String name =
                        classes.relativize(file).toString().replace('/', '.').replaceAll("\\.class$", "");
                Class<?> type = Class.forName(name, false, AdminEndpointsTest.class.getClassLoader());
                if (type.isAnnotationPresent(Path.class)) {
                    resources.add(type);
                }
            }
        }
        return resources;
    }
}
