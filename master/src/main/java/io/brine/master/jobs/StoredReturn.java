package io.brine.master.jobs;

/** One minion's return for a job, as stored and as shown to publishers. */
public record StoredReturn(String id, Object returnValue, int retcode, boolean success, long durationMs, String time) {}
