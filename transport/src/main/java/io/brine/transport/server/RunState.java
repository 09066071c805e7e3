package io.brine.transport.server;

import java.util.concurrent.atomic.AtomicReference;

/** A server transport's life, new → running → closed, each step once; thread-safe. */
public final class RunState {

    private enum State {
        NEW,
        RUNNING,
        CLOSED
    }

    private final AtomicReference<State> state = new AtomicReference<>(State.NEW);

    /** New → running; an IllegalStateException when started or closed before. */
    public void start() {
        if (!state.compareAndSet(State.NEW, State.RUNNING)) {
            throw new IllegalStateException("transport already started or closed");
        }
    }

    public boolean isRunning() {
        return state.get() == State.RUNNING;
    }

    /** → closed; true when it was running until now (the caller then releases what it holds). */
    public boolean close() {
        return state.getAndSet(State.CLOSED) == State.RUNNING;
    }
}
