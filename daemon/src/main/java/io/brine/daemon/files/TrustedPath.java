package io.brine.daemon.files;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Whether a file that decides who is trusted (an autosign file, a policy executable, a provisioner key) can be
 * written only by the admin: sshd's StrictModes, done for every component. The file and every directory on its path
 * must be owned by root or by the user this process runs as, and writable by neither group nor others; a directory
 * that others may write is allowed only with the sticky bit (as {@code /tmp}: nobody can then rename or delete an
 * entry they do not own, and an entry they create is theirs, so it fails the owner rule). A symbolic link is
 * followed only when the link's own directory passes and its target passes the same rule, at every hop.
 */
public final class TrustedPath {

    private static final int MAX_LINKS = 40;
    private static final int GROUP_WRITE = 0020;
    private static final int OTHERS_WRITE = 0002;
    private static final int STICKY = 01000;
    private static final int TYPE_MASK = 0170000;
    private static final int TYPE_LINK = 0120000;
    private static final int TYPE_DIR = 0040000;

    private final int masterUid;

    /** Trusts root and {@code masterUid} as owners. */
    public TrustedPath(int masterUid) {
        this.masterUid = masterUid;
    }

    /** Trusts root and the user this process runs as. */
    public static TrustedPath forThisProcess() {
        return new TrustedPath(processUid());
    }

    /** The effective uid of this process: the owner of {@code /proc/self}; root's when that cannot be read. */
    public static int processUid() {
        try {
            return (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return 0;
        }
    }

    /**
     * Why {@code file} cannot be trusted (naming the path component at fault and the rule it breaks), or empty when
     * it can. A missing file is no problem here: callers report it as missing.
     */
    public Optional<String> problem(Path file) {
        try {
            return check(file.toAbsolutePath().normalize(), 0);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            return Optional.of(file + " cannot be checked: " + e.getMessage());
        }
    }

    private Optional<String> check(Path path, int links) throws IOException {
        if (links > MAX_LINKS) {
            return Optional.of(path + ": too many levels of symbolic links");
        }
        Path current = path.getRoot();
        Optional<String> rootProblem = component(current, path);
        if (rootProblem.isPresent()) {
            return rootProblem;
        }
        for (int i = 0; i < path.getNameCount(); i++) {
            Path next = current.resolve(path.getName(i));
            int mode = (Integer) Files.getAttribute(next, "unix:mode", LinkOption.NOFOLLOW_LINKS);
            if ((mode & TYPE_MASK) == TYPE_LINK) {
                Optional<String> linkProblem = owner(next, path, "symbolic link");
                if (linkProblem.isPresent()) {
                    return linkProblem;
                }
                Path target = current.resolve(Files.readSymbolicLink(next)).normalize();
                Path rest = target;
                for (int j = i + 1; j < path.getNameCount(); j++) {
                    rest = rest.resolve(path.getName(j));
                }
                return check(rest.normalize(), links + 1)
                        .map(problem -> problem + " (reached through the symbolic link " + next + ")");
            }
            Optional<String> problem = component(next, path);
            if (problem.isPresent()) {
                return problem;
            }
            current = next;
        }
        return Optional.empty();
    }

    private Optional<String> component(Path component, Path whole) throws IOException {
        int mode = (Integer) Files.getAttribute(component, "unix:mode", LinkOption.NOFOLLOW_LINKS);
        boolean directory = (mode & TYPE_MASK) == TYPE_DIR;
        String what = component.equals(whole) ? "" : "directory ";
        Optional<String> owner = owner(component, whole, what.isEmpty() ? "file" : "directory");
        if (owner.isPresent()) {
            return owner;
        }
        if ((mode & (GROUP_WRITE | OTHERS_WRITE)) != 0
                && !(directory && (mode & STICKY) != 0 && !component.equals(whole))) {
            return Optional.of(prefix(component, whole) + what + component + " is writable by "
                    + ((mode & GROUP_WRITE) != 0 ? "its group" : "others") + " (mode "
                    + String.format("%04o", mode & 07777) + "), so someone other than the admin could change it;"
                    + " run: chmod go-w " + component);
        }
        return Optional.empty();
    }

    private Optional<String> owner(Path component, Path whole, String what) throws IOException {
        int uid = (Integer) Files.getAttribute(component, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (uid == 0 || uid == masterUid) {
            return Optional.empty();
        }
        String name = Files.getOwner(component, LinkOption.NOFOLLOW_LINKS).getName();
        return Optional.of(prefix(component, whole) + what + " " + component + " is owned by " + name + " (uid " + uid
                + "), not by root" + (masterUid != 0 ? " or uid " + masterUid : "") + ", so that user could change"
                + " it; run: chown root " + component);
    }

    private static String prefix(Path component, Path whole) {
        return component.equals(whole) ? "" : whole + ": ";
    }
}
