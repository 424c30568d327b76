/* onyx: command-line front end for the onyx runtime. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage_main(void) {
    printf("usage: onyx <command> [options]\n"
           "\n"
           "commands:\n"
           "  info MODEL     describe a model's inputs, outputs, operators and weights\n"
           "  run MODEL      run a model on given or random inputs\n"
           "  bench MODEL    time session creation and runs, report peak memory\n"
           "  check MODEL    compare a configuration with the reference, find the\n"
           "                 first node that diverges\n"
           "  compile MODEL  optimize a model once and save it (.onyx or ONNX)\n"
           "  devices        list the devices each provider sees, usable or not\n"
           "  help [COMMAND] show help for onyx or for one command\n"
           "\n"
           "options:\n"
           "  -h, --help     show this help\n"
           "  --version      print the version\n"
           "\n"
           "Run 'onyx <command> --help' for a command's options.\n");
}

static int cmd_help(int argc, char **argv) {
    if (argc <= 1) {
        usage_main();
        return CLI_OK;
    }
    if (argc > 2) return cli_error("help takes at most one command (see 'onyx --help')");
    if (strcmp(argv[1], "info") == 0) usage_info();
    else if (strcmp(argv[1], "run") == 0) usage_run();
    else if (strcmp(argv[1], "bench") == 0) usage_bench();
    else if (strcmp(argv[1], "check") == 0) usage_check();
    else if (strcmp(argv[1], "devices") == 0) usage_devices();
    else if (strcmp(argv[1], "compile") == 0) usage_compile();
    else if (strcmp(argv[1], "help") == 0) usage_main();
    else return cli_error("unknown command '%s' (see 'onyx --help')", argv[1]);
    return CLI_OK;
}

int main(int argc, char **argv) {
    if (argc < 2) return cli_error("no command given (see 'onyx --help')");
    const char *cmd = argv[1];
    if (cli_is_help(cmd)) {
        usage_main();
        return CLI_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "-V") == 0) {
        printf("onyx %s\n", onyx_version());
        return CLI_OK;
    }
    if (strcmp(cmd, "help") == 0) return cmd_help(argc - 1, argv + 1);
    if (strcmp(cmd, "info") == 0) return cmd_info(argc - 1, argv + 1);
    if (strcmp(cmd, "run") == 0) return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "bench") == 0) return cmd_bench(argc - 1, argv + 1);
    if (strcmp(cmd, "check") == 0) return cmd_check(argc - 1, argv + 1);
    if (strcmp(cmd, "devices") == 0) return cmd_devices(argc - 1, argv + 1);
    if (strcmp(cmd, "compile") == 0) return cmd_compile(argc - 1, argv + 1);
    if (cmd[0] == '-') return cli_error("unknown option '%s' (see 'onyx --help')", cmd);
    return cli_error("unknown command '%s' (see 'onyx --help')", cmd);
}
