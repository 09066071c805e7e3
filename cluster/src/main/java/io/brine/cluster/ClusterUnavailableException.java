package io.brine.cluster;

import java.io.IOException;

/**
 * The ensemble could not be reached: no server of {@code cluster.connect} answered, or too few of them run to make
 * a quorum. Unlike a bad password file or a refused ACL, trying again later may work.
 */
public final class ClusterUnavailableException extends IOException {

    public ClusterUnavailableException(String message) {
        super(message);
    }
}
