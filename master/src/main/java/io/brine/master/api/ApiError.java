package io.brine.master.api;

import io.netty.handler.codec.http.HttpResponseStatus;

/**
 * A refusal of a request: its status and a message for the caller, which names what was wrong with the request and
 * never a path, a class or a trace. Thrown by the routes and turned into a JSON error by {@link ApiHandler}.
 */
final class ApiError extends Exception {

    private final HttpResponseStatus status;

    ApiError(HttpResponseStatus status, String message) {
        super(message, null, false, false);
        this.status = status;
    }

    HttpResponseStatus status() {
        return status;
    }

    static ApiError badRequest(String message) {
        return new ApiError(HttpResponseStatus.BAD_REQUEST, message);
    }

    static ApiError notFound(String message) {
        return new ApiError(HttpResponseStatus.NOT_FOUND, message);
    }

    static ApiError conflict(String message) {
        return new ApiError(HttpResponseStatus.CONFLICT, message);
    }

    static ApiError forbidden(String message) {
        return new ApiError(HttpResponseStatus.FORBIDDEN, message);
    }
}
