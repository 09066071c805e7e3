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
    # shellcheck disable=SC2086 # BRINE_JAVA_OPTS is a list of options
    exec "$java" "${jvm_options[@]}" ${BRINE_JAVA_OPTS:-} -cp "$classpath" "$main" "$@"
}
