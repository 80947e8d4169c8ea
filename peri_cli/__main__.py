from peri_cli.cli import main

raise SystemExit(main())
