"""``python3 -m sparklog.programs NAME`` prints the path of a program's ``.dl`` file."""

from sparklog.programs import main

raise SystemExit(main())
