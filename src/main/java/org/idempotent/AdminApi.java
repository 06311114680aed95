package org.idempotent;

import jakarta.annotation.security.DeclareRoles;
import jakarta.ws.rs.ApplicationPath;
import jakarta.ws.rs.BadRequestException;
import jakarta.ws.rs.core.Application;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Map;

/**
 * The REST API, under /payment-consumer/api. Everything under api/admin needs the administrator role (WEB-INF/web.xml:
 * HTTP Basic against the server's file realm; the user is created by the post-boot file).
 */
@ApplicationPath("api")
@DeclareRoles(AdminApi.ROLE)
public class AdminApi extends Application {

    public static final String ROLE = "payments-admin";

    /** A 400 whose JSON body says what was wrong: {@code {"error": "..."}}, as every admin resource answers. */
    public static BadRequestException badRequest(String message) {
        return new BadRequestException(Response.status(Response.Status.BAD_REQUEST)
                .type(MediaType.APPLICATION_JSON)
                .entity(Map.of("error", message))
                .build());
    }
}
