import sys

from shoe_controller.cli import main

sys.exit(main())
