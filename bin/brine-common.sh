# Sourced by the bin/brine-* launchers. Finds java and the class path of one module, for a build of the
# checkout (MODULE/target/brine-MODULE.jar + MODULE/target/lib/*) and for the release tarball's layout next to bin/
# (lib/MODULE/*: the program's own jar, whose logging setup no other program may see; lib/*: shared libraries).
#
#   brine_exec MODULE MAIN_CLASS [JVM options...] -- [program arguments...]
#
# Environment: JAVA_HOME (else java on the PATH), BRINE_JAVA_OPTS (extra JVM options, split on spaces).

brine_home() {
    local script
    script=$(readlink -f "${BASH_SOURCE[0]}" 2>/dev/null || echo "${BASH_SOURCE[0]}")
    cd "$(dirname "$script")/.." && pwd
}

brine_classpath() {
    local module=$1 home
    home=$(brine_home)
    if [ -d "$home/lib/$module" ]; then
        printf '%s' "$home/lib/$module/*:$home/lib/*"
    elif [ -f "$home/$module/target/brine-$module.jar" ] && [ -d "$home/$module/target/lib" ]; then
        printf '%s' "$home/$module/target/brine-$module.jar:$home/$module/target/lib/*"
    else
        echo "brine is not built yet: run ./mvnw -q -DskipTests package (in $home)" >&2
        return 2
    fi
}

brine_java() {
    local java=java
    if [ -n "${JAVA_HOME:-}" ]; then
        java="$JAVA_HOME/bin/java"
    fi
    if ! command -v "$java" >/dev/null 2>&1; then
        echo "java not found: install Java 17 or newer, or set JAVA_HOME" >&2
        return 2
    fi
    printf '%s' "$java"
}

# Java 17 reads and makes file names, and decodes its arguments, in the locale's character set: with none set (a
# service manager's or a container's bare environment, POSIX), that is ASCII, and a pki_dir, state tree or config
# under a non-ASCII path cannot be opened. Without a UTF-8 character type in the environment, the JVM gets C.UTF-8's
# (LC_CTYPE only, or LC_ALL when that is what overrides it); a system without that locale runs as before.
brine_utf8() {
    case "${LC_ALL:-${LC_CTYPE:-${LANG:-}}}" in
        *.[Uu][Tt][Ff]-8 | *.[Uu][Tt][Ff]8 | *.[Uu][Tt][Ff]-8@* | *.[Uu][Tt][Ff]8@*) return ;;
    esac
    if [ -n "${LC_ALL:-}" ]; then
        export LC_ALL=C.UTF-8
    else
        export LC_CTYPE=C.UTF-8
    fi
}

brine_exec() {
    local module=$1 main=$2 classpath java
    shift 2
    local jvm_options=()
    while [ $# -gt 0 ] && [ "$1" != "--" ]; do
        jvm_options+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift
    classpath=$(brine_classpath "$module") || exit 2
    java=$(brine_java) || exit 2
    brine_utf8
    # shellcheck disable=SC2086 # BRINE_JAVA_OPTS is a list of options
    exec "$java" "${jvm_options[@]}" ${BRINE_JAVA_OPTS:-} -cp "$classpath" "$main" "$@"
}
