package org.idempotent.operations.boundary;

import jakarta.ws.rs.HttpMethod;
import jakarta.ws.rs.container.ContainerRequestContext;
import jakarta.ws.rs.container.ContainerRequestFilter;
import jakarta.ws.rs.container.PreMatching;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.ext.Provider;
import java.util.Map;
import java.util.Set;

/**
 * Refuses a state-changing admin call that a web page could have made in an administrator's browser: one that is
 * neither JSON nor carries {@value #HEADER}. A page on another origin can POST a form (urlencoded, multipart, plain
 * text) or a bodiless request with the browser's cached Basic credentials, but it cannot set a JSON content type or
 * a custom header without a CORS preflight, which this API never grants. Before resource matching, so that every such
 * call gets this answer, whatever its content type.
 */
@Provider
@PreMatching
public class AdminCallOrigin implements ContainerRequestFilter {

    public static final String HEADER = "X-Requested-By";
    private static final Set<String> SAFE = Set.of(HttpMethod.GET, HttpMethod.HEAD, HttpMethod.OPTIONS);

    @Override
    public void filter(ContainerRequestContext request) {
        if (SAFE.contains(request.getMethod())
                || !request.getUriInfo().getPath().replaceFirst("^/", "").startsWith("admin")) {
            return;
        }
        MediaType type = request.getMediaType();
        boolean json = type != null && type.isCompatible(MediaType.APPLICATION_JSON_TYPE);
        String header = request.getHeaderString(HEADER);
        if (!json && (header == null || header.isBlank())) {
            request.abortWith(Response.status(Response.Status.FORBIDDEN)
                    .type(MediaType.APPLICATION_JSON)
                    .entity(Map.of(
                            "error",
                            "a state-changing admin call needs a JSON body (Content-Type: "
                                    + "application/json) or the " + HEADER
                                    + " header; a browser form can send neither"))
                    .build());
        }
    }
}
