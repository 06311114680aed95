package org.idempotent;

import jakarta.annotation.security.DeclareRoles;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.core.Application;

/**
 * The REST API, under /payment-consumer/api. Everything under api/admin needs the administrator role (WEB-INF/web.xml:
 * HTTP Basic against the server's file realm; the user is created by the post-boot file).
 */
@ApplicationPath("api")
@DeclareRoles(AdminApi.ROLE)
public class AdminApi extends Application {

    public static final String ROLE = "payments-admin";
}
