from rag.cli import main

if __name__ == "__main__":
    main()
