-- library: small SQLite database for the lucid mini text-to-SQL benchmark (CC0).
PRAGMA foreign_keys = ON;

CREATE TABLE authors (
    author_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    birth_year INTEGER,
    country TEXT
);

CREATE TABLE books (
    book_id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    author_id INTEGER NOT NULL,
    genre TEXT,
    published_year INTEGER,
    pages INTEGER,
    FOREIGN KEY (author_id) REFERENCES authors (author_id)
);

CREATE TABLE members (
    member_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT,
    join_date TEXT,
    email TEXT
);

CREATE TABLE loans (
    loan_id INTEGER PRIMARY KEY,
    book_id INTEGER NOT NULL,
    member_id INTEGER NOT NULL,
    loan_date TEXT NOT NULL,
    due_date TEXT NOT NULL,
    return_date TEXT,
    FOREIGN KEY (book_id) REFERENCES books (book_id),
    FOREIGN KEY (member_id) REFERENCES members (member_id)
);

INSERT INTO authors (author_id, name, birth_year, country) VALUES (1, 'Jane Austen', 1775, 'United Kingdom');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (2, 'Charles Dickens', 1812, 'United Kingdom');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (3, 'Leo Tolstoy', 1828, 'Russia');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (4, 'Mark Twain', 1835, 'United States');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (5, 'Virginia Woolf', 1882, 'United Kingdom');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (6, 'George Orwell', 1903, 'United Kingdom');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (7, 'Fyodor Dostoevsky', 1821, 'Russia');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (8, 'Herman Melville', 1819, 'United States');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (9, 'Mary Shelley', 1797, 'United Kingdom');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (10, 'Gabriel Garcia Marquez', 1927, 'Colombia');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (11, 'Chinua Achebe', 1930, 'Nigeria');
INSERT INTO authors (author_id, name, birth_year, country) VALUES (12, 'Toni Morrison', 1931, 'United States');

INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (1, 'Pride and Prejudice', 1, 'Romance', 1813, 432);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (2, 'Emma', 1, 'Romance', 1815, 474);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (3, 'Sense and Sensibility', 1, 'Romance', 1811, 409);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (4, 'Persuasion', 1, 'Romance', 1817, 249);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (5, 'Great Expectations', 2, 'Classic', 1861, 505);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (6, 'A Tale of Two Cities', 2, 'Historical', 1859, 489);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (7, 'Oliver Twist', 2, 'Classic', 1838, 608);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (8, 'War and Peace', 3, 'Historical', 1869, 1225);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (9, 'Anna Karenina', 3, 'Romance', 1878, 864);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (10, 'Adventures of Huckleberry Finn', 4, 'Adventure', 1884, 366);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (11, 'The Adventures of Tom Sawyer', 4, 'Adventure', 1876, 274);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (12, 'Mrs Dalloway', 5, 'Modernist', 1925, 194);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (13, 'To the Lighthouse', 5, 'Modernist', 1927, 209);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (14, 'Orlando', 5, 'Modernist', 1928, 333);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (15, 'Nineteen Eighty-Four', 6, 'Dystopian', 1949, 328);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (16, 'Animal Farm', 6, 'Satire', 1945, 112);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (17, 'Crime and Punishment', 7, 'Classic', 1866, 671);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (18, 'The Brothers Karamazov', 7, 'Classic', 1880, 824);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (19, 'Moby-Dick', 8, 'Adventure', 1851, 635);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (20, 'Frankenstein', 9, 'Gothic', 1818, 280);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (21, 'The Last Man', 9, 'Dystopian', 1826, 479);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (22, 'One Hundred Years of Solitude', 10, 'Magical Realism', 1967, 417);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (23, 'Love in the Time of Cholera', 10, 'Romance', 1985, 348);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (24, 'Things Fall Apart', 11, 'Classic', 1958, 209);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (25, 'Beloved', 12, 'Historical', 1987, 324);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (26, 'Song of Solomon', 12, 'Classic', 1977, 337);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (27, 'The Idiot', 7, 'Classic', 1869, 656);
INSERT INTO books (book_id, title, author_id, genre, published_year, pages) VALUES (28, 'Bartleby, the Scrivener', 8, 'Classic', 1853, NULL);

INSERT INTO members (member_id, name, city, join_date, email) VALUES (1, 'Olivia Bennett', 'Boston', '2021-03-14', 'olivia.bennett@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (2, 'Marcus Reed', 'Chicago', '2022-07-02', NULL);
INSERT INTO members (member_id, name, city, join_date, email) VALUES (3, 'Priya Natarajan', 'Seattle', '2020-11-20', 'priya.n@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (4, 'Daniel Okafor', 'Boston', '2023-01-09', 'd.okafor@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (5, 'Sofia Alvarez', 'Denver', '2019-05-30', NULL);
INSERT INTO members (member_id, name, city, join_date, email) VALUES (6, 'Liam Gallagher', 'Chicago', '2023-09-15', 'liam.g@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (7, 'Hannah Kim', 'Seattle', '2022-02-11', 'hannah.kim@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (8, 'Ethan Brooks', 'Portland', '2021-08-23', NULL);
INSERT INTO members (member_id, name, city, join_date, email) VALUES (9, 'Amara Diallo', 'Boston', '2024-01-04', 'amara.d@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (10, 'Lucas Moreau', 'Denver', '2020-06-17', 'lucas.moreau@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (11, 'Grace Whitfield', 'Portland', '2023-04-28', 'grace.w@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (12, 'Siobhan O''Connor', 'Chicago', '2021-12-01', NULL);
INSERT INTO members (member_id, name, city, join_date, email) VALUES (13, 'Noah Lindqvist', 'Seattle', '2024-02-19', 'noah.l@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (14, 'Isabella Rossi', 'Boston', '2022-10-06', 'isabella.rossi@example.com');
INSERT INTO members (member_id, name, city, join_date, email) VALUES (15, 'Kenji Watanabe', 'Denver', '2023-06-12', NULL);

INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (1, 26, 1, '2024-01-06', '2024-01-27', '2024-01-31');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (2, 11, 15, '2024-01-10', '2024-01-31', '2024-01-19');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (3, 2, 15, '2024-01-12', '2024-02-02', '2024-02-09');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (4, 1, 3, '2024-01-15', '2024-02-05', '2024-01-18');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (5, 15, 15, '2024-01-15', '2024-02-05', '2024-01-20');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (6, 26, 10, '2024-01-22', '2024-02-12', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (7, 17, 7, '2024-01-26', '2024-02-16', '2024-02-01');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (8, 6, 12, '2024-01-27', '2024-02-17', '2024-02-22');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (9, 12, 15, '2024-01-30', '2024-02-20', '2024-02-03');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (10, 26, 1, '2024-01-31', '2024-02-21', '2024-02-18');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (11, 6, 2, '2024-02-01', '2024-02-22', '2024-02-15');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (12, 23, 12, '2024-02-03', '2024-02-24', '2024-02-08');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (13, 25, 15, '2024-02-10', '2024-03-02', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (14, 22, 2, '2024-02-11', '2024-03-03', '2024-02-26');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (15, 14, 2, '2024-02-11', '2024-03-03', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (16, 26, 13, '2024-02-14', '2024-03-06', '2024-02-26');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (17, 23, 2, '2024-03-01', '2024-03-22', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (18, 16, 9, '2024-03-02', '2024-03-23', '2024-03-23');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (19, 15, 12, '2024-03-03', '2024-03-24', '2024-04-01');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (20, 3, 15, '2024-03-06', '2024-03-27', '2024-03-29');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (21, 18, 6, '2024-03-10', '2024-03-31', '2024-03-14');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (22, 10, 14, '2024-03-12', '2024-04-02', '2024-03-21');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (23, 23, 2, '2024-03-14', '2024-04-04', '2024-04-11');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (24, 16, 14, '2024-03-14', '2024-04-04', '2024-03-28');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (25, 15, 2, '2024-03-21', '2024-04-11', '2024-04-03');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (26, 26, 2, '2024-03-24', '2024-04-14', '2024-04-17');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (27, 12, 1, '2024-03-25', '2024-04-15', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (28, 15, 7, '2024-04-04', '2024-04-25', '2024-04-27');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (29, 19, 1, '2024-04-05', '2024-04-26', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (30, 15, 2, '2024-04-10', '2024-05-01', '2024-04-21');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (31, 7, 7, '2024-04-11', '2024-05-02', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (32, 23, 15, '2024-04-11', '2024-05-02', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (33, 19, 1, '2024-04-12', '2024-05-03', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (34, 20, 5, '2024-04-18', '2024-05-09', NULL);
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (35, 22, 10, '2024-04-18', '2024-05-09', '2024-04-27');
INSERT INTO loans (loan_id, book_id, member_id, loan_date, due_date, return_date) VALUES (36, 15, 2, '2024-04-22', '2024-05-13', NULL);
