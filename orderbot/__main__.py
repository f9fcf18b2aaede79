from orderbot.cli import main

main()
