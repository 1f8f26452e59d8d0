from doctor.entry import main

main()
