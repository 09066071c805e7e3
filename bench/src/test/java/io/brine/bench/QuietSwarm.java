package io.brine.bench;

import io.brine.protocol.codec.Decoded;
import io.brine.protocol.message.AuthStatus;
import java.time.Clock;

/**
 * A swarm for one simulated minion under test: nothing verified, nothing counted. A test overrides what it checks.
 */
abstract class QuietSwarm implements SimMinion.Swarm {

    @Override
    public boolean verifiedByMaster(Decoded.Ok ok) {
        return false;
    }

    @Override
    public boolean verifyReply(Decoded.Ok ok) {
        return false;
    }

    @Override
    public Clock clock() {
        return Clock.systemUTC();
    }

    @Override
    public void accepted(BenchMinion minion, long nanos) {}

    @Override
    public void refused(BenchMinion minion, AuthStatus status) {}

    @Override
    public void keyInstalled(BenchMinion minion, long generation, long nanos) {}

    @Override
    public void delivered(BenchMinion minion, long nanos) {}

    @Override
    public void returned(BenchMinion minion) {}

    @Override
    public void sessionUnknown(BenchMinion minion) {}

    @Override
    public void resumptionRefused(BenchMinion minion) {}

    @Override
    public void rotationAsked(BenchMinion minion, long nanos) {}

    @Override
    public void keyRotated(BenchMinion minion, long askedNanos, long nanos) {}

    @Override
    public void rotationRefused(BenchMinion minion, String reason) {}

    @Override
    public void masterKeyPinned(BenchMinion minion, long nanos) {}

    @Override
    public void masterChainRefused(BenchMinion minion, String reason) {}
}
