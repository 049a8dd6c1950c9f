"""`python -m outlive worker MODULE...`: the worker for Python handlers (outlive.worker)."""
import sys

from .worker import main as worker_main


def main() -> int:
    """Dispatches the one subcommand there is."""
    if len(sys.argv) < 2 or sys.argv[1] != "worker":
        sys.stderr.write("usage: python -m outlive worker [--store DIR] [options] MODULE [MODULE...]\n"
                         "(python -m outlive worker --help for the options)\n")
        return 64
    return worker_main(sys.argv[2:])


if __name__ == "__main__":
    sys.exit(main())
