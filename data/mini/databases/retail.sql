-- retail: small SQLite database for the lucid mini text-to-SQL benchmark (CC0).
PRAGMA foreign_keys = ON;

CREATE TABLE customers (
    customer_id INTEGER PRIMARY KEY,
    first_name TEXT NOT NULL,
    last_name TEXT NOT NULL,
    city TEXT,
    country TEXT,
    signup_date TEXT,
    email TEXT
);

CREATE TABLE products (
    product_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    category TEXT,
    unit_price REAL NOT NULL,
    discontinued INTEGER NOT NULL DEFAULT 0
);

CREATE TABLE orders (
    order_id INTEGER PRIMARY KEY,
    customer_id INTEGER NOT NULL,
    order_date TEXT NOT NULL,
    status TEXT NOT NULL,
    shipped_date TEXT,
    FOREIGN KEY (customer_id) REFERENCES customers (customer_id)
);

CREATE TABLE order_items (
    order_id INTEGER NOT NULL,
    product_id INTEGER NOT NULL,
    quantity INTEGER NOT NULL,
    unit_price REAL NOT NULL,
    PRIMARY KEY (order_id, product_id),
    FOREIGN KEY (order_id) REFERENCES orders (order_id),
    FOREIGN KEY (product_id) REFERENCES products (product_id)
);

INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (1, 'Emily', 'Carter', 'Toronto', 'Canada', '2022-01-15', 'emily.carter@example.com');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (2, 'James', 'Whitaker', 'London', 'United Kingdom', '2021-06-03', 'j.whitaker@example.co.uk');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (3, 'Anna', 'Schmidt', 'Berlin', 'Germany', '2023-03-22', NULL);
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (4, 'Michael', 'Nguyen', 'Seattle', 'United States', '2020-09-10', 'mnguyen@example.com');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (5, 'Sarah', 'Johnson', 'Austin', 'United States', '2022-11-28', 'sarah.j@example.com');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (6, 'Tom', 'Fischer', 'Munich', 'Germany', '2021-02-14', 'tom.fischer@example.de');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (7, 'Chloe', 'Martin', 'Vancouver', 'Canada', '2023-07-07', NULL);
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (8, 'David', 'Patel', 'Manchester', 'United Kingdom', '2020-04-19', 'dpatel@example.co.uk');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (9, 'Laura', 'Becker', 'Hamburg', 'Germany', '2022-08-30', 'laura.becker@example.de');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (10, 'Robert', 'Miller', 'Austin', 'United States', '2019-12-05', NULL);
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (11, 'Mia', 'Lopez', 'Seattle', 'United States', '2023-10-12', 'mia.lopez@example.com');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (12, 'Oliver', 'Smith', 'London', 'United Kingdom', '2024-01-20', 'oliver.smith@example.co.uk');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (13, 'Zoe', 'Tremblay', 'Toronto', 'Canada', '2021-05-09', 'zoe.t@example.ca');
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (14, 'Felix', 'Wagner', 'Berlin', 'Germany', '2024-02-02', NULL);
INSERT INTO customers (customer_id, first_name, last_name, city, country, signup_date, email) VALUES (15, 'Grace', 'Hall', 'Chicago', 'United States', '2022-04-25', 'grace.hall@example.com');

INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (1, 'Wireless Mouse', 'Electronics', 24.99, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (2, 'Mechanical Keyboard', 'Electronics', 89.5, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (3, 'USB-C Hub', 'Electronics', 39.0, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (4, 'Noise Cancelling Headphones', 'Electronics', 199.99, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (5, 'Ceramic Coffee Mug', 'Kitchen', 12.5, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (6, 'French Press', 'Kitchen', 34.95, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (7, 'Chef Knife', 'Kitchen', 59.0, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (8, 'Yoga Mat', 'Sports', 29.99, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (9, 'Adjustable Dumbbells', 'Sports', 149.0, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (10, 'Running Water Bottle', 'Sports', 18.75, 1);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (11, 'Desk Lamp', 'Home', 45.0, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (12, 'Throw Blanket', 'Home', 38.0, 1);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (13, 'Scented Candle Set', 'Home', 22.0, 0);
INSERT INTO products (product_id, name, category, unit_price, discontinued) VALUES (14, 'Portable Charger', 'Electronics', 32.5, 1);

INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (1, 12, '2023-09-01', 'pending', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (2, 7, '2023-09-01', 'pending', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (3, 12, '2023-09-11', 'shipped', '2023-09-12');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (4, 10, '2023-09-11', 'delivered', '2023-09-14');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (5, 4, '2023-09-11', 'delivered', '2023-09-13');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (6, 4, '2023-10-15', 'pending', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (7, 14, '2023-11-12', 'delivered', '2023-11-14');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (8, 11, '2023-11-26', 'delivered', '2023-11-27');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (9, 1, '2023-11-27', 'delivered', '2023-11-30');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (10, 5, '2023-11-29', 'pending', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (11, 15, '2023-12-08', 'delivered', '2023-12-12');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (12, 12, '2023-12-09', 'shipped', '2023-12-13');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (13, 10, '2023-12-11', 'delivered', '2023-12-15');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (14, 1, '2023-12-30', 'delivered', '2024-01-01');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (15, 5, '2024-01-10', 'delivered', '2024-01-11');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (16, 1, '2024-01-13', 'cancelled', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (17, 13, '2024-01-27', 'delivered', '2024-01-30');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (18, 6, '2024-02-04', 'cancelled', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (19, 9, '2024-02-10', 'delivered', '2024-02-13');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (20, 4, '2024-02-23', 'pending', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (21, 10, '2024-03-11', 'delivered', '2024-03-12');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (22, 6, '2024-03-18', 'cancelled', NULL);
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (23, 7, '2024-03-26', 'delivered', '2024-03-28');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (24, 2, '2024-04-13', 'delivered', '2024-04-16');
INSERT INTO orders (order_id, customer_id, order_date, status, shipped_date) VALUES (25, 14, '2024-04-13', 'shipped', '2024-04-14');

INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (1, 3, 3, 39.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (1, 9, 4, 149.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (1, 12, 3, 38.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (2, 2, 3, 89.5);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (2, 1, 3, 24.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (2, 12, 1, 38.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (3, 8, 1, 29.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (4, 8, 2, 29.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (4, 7, 4, 59.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (4, 11, 2, 45.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (5, 10, 3, 18.75);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (5, 12, 3, 38.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (6, 1, 1, 24.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (6, 8, 4, 29.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (7, 11, 3, 45.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (7, 4, 1, 199.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (8, 6, 1, 34.95);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (8, 5, 1, 12.5);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (9, 14, 3, 32.5);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (10, 2, 1, 89.5);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (10, 13, 1, 22.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (10, 12, 1, 38.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (11, 4, 4, 199.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (11, 3, 1, 39.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (12, 4, 3, 199.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (12, 8, 1, 29.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (13, 8, 3, 29.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (13, 6, 1, 34.95);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (14, 13, 1, 22.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (15, 13, 1, 22.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (16, 3, 1, 39.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (17, 6, 3, 34.95);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (18, 6, 3, 34.95);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (19, 8, 4, 29.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (20, 12, 1, 38.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (21, 9, 1, 149.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (22, 1, 2, 24.99);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (23, 13, 4, 22.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (24, 13, 2, 22.0);
INSERT INTO order_items (order_id, product_id, quantity, unit_price) VALUES (25, 11, 2, 45.0);
