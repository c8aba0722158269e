-- flights: small SQLite database for the lucid mini text-to-SQL benchmark (CC0).
PRAGMA foreign_keys = ON;

CREATE TABLE airports (
    airport_code TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    city TEXT,
    country TEXT
);

CREATE TABLE airlines (
    airline_id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    country TEXT,
    alliance TEXT,
    founded_year INTEGER
);

CREATE TABLE flights (
    flight_id INTEGER PRIMARY KEY,
    airline_id INTEGER NOT NULL,
    flight_number TEXT NOT NULL,
    origin TEXT NOT NULL,
    destination TEXT NOT NULL,
    departure_date TEXT NOT NULL,
    distance_km INTEGER,
    delay_minutes INTEGER,
    status TEXT NOT NULL,
    FOREIGN KEY (airline_id) REFERENCES airlines (airline_id),
    FOREIGN KEY (origin) REFERENCES airports (airport_code),
    FOREIGN KEY (destination) REFERENCES airports (airport_code)
);

INSERT INTO airports (airport_code, name, city, country) VALUES ('JFK', 'John F. Kennedy International Airport', 'New York', 'United States');
INSERT INTO airports (airport_code, name, city, country) VALUES ('LAX', 'Los Angeles International Airport', 'Los Angeles', 'United States');
INSERT INTO airports (airport_code, name, city, country) VALUES ('ORD', 'O''Hare International Airport', 'Chicago', 'United States');
INSERT INTO airports (airport_code, name, city, country) VALUES ('SFO', 'San Francisco International Airport', 'San Francisco', 'United States');
INSERT INTO airports (airport_code, name, city, country) VALUES ('LHR', 'Heathrow Airport', 'London', 'United Kingdom');
INSERT INTO airports (airport_code, name, city, country) VALUES ('CDG', 'Charles de Gaulle Airport', 'Paris', 'France');
INSERT INTO airports (airport_code, name, city, country) VALUES ('FRA', 'Frankfurt Airport', 'Frankfurt', 'Germany');
INSERT INTO airports (airport_code, name, city, country) VALUES ('AMS', 'Amsterdam Airport Schiphol', 'Amsterdam', 'Netherlands');
INSERT INTO airports (airport_code, name, city, country) VALUES ('DXB', 'Dubai International Airport', 'Dubai', 'United Arab Emirates');
INSERT INTO airports (airport_code, name, city, country) VALUES ('NRT', 'Narita International Airport', 'Tokyo', 'Japan');

INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (1, 'Delta Air Lines', 'United States', 'SkyTeam', 1925);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (2, 'United Airlines', 'United States', 'Star Alliance', 1926);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (3, 'British Airways', 'United Kingdom', 'oneworld', 1974);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (4, 'Lufthansa', 'Germany', 'Star Alliance', 1953);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (5, 'Air France', 'France', 'SkyTeam', 1933);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (6, 'Emirates', 'United Arab Emirates', NULL, 1985);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (7, 'Japan Airlines', 'Japan', 'oneworld', 1951);
INSERT INTO airlines (airline_id, name, country, alliance, founded_year) VALUES (8, 'KLM', 'Netherlands', 'SkyTeam', 1919);

INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (1, 3, 'BA394', 'LHR', 'SFO', '2024-06-01', 8610, 25, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (2, 6, 'EK66', 'DXB', 'FRA', '2024-06-01', 4840, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (3, 8, 'KL862', 'DXB', 'AMS', '2024-06-01', 5160, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (4, 8, 'KL986', 'DXB', 'AMS', '2024-06-01', 5160, 95, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (5, 5, 'AF993', 'FRA', 'CDG', '2024-06-02', 448, 70, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (6, 3, 'BA164', 'SFO', 'LHR', '2024-06-02', 8610, 25, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (7, 3, 'BA386', 'LHR', 'CDG', '2024-06-03', 344, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (8, 6, 'EK239', 'DXB', 'FRA', '2024-06-03', 4840, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (9, 6, 'EK995', 'DXB', 'NRT', '2024-06-03', 7950, 70, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (10, 7, 'JL228', 'NRT', 'FRA', '2024-06-03', 9350, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (11, 7, 'JL255', 'LAX', 'NRT', '2024-06-03', 8815, 120, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (12, 3, 'BA370', 'FRA', 'LHR', '2024-06-04', 654, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (13, 3, 'BA688', 'LHR', 'AMS', '2024-06-04', 371, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (14, 1, 'DL637', 'NRT', 'LAX', '2024-06-04', 8815, 35, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (15, 6, 'EK885', 'DXB', 'FRA', '2024-06-04', 4840, 40, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (16, 2, 'UA203', 'LAX', 'ORD', '2024-06-04', 2807, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (17, 3, 'BA637', 'DXB', 'LHR', '2024-06-05', 5470, NULL, 'cancelled');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (18, 1, 'DL478', 'CDG', 'JFK', '2024-06-05', 5837, 25, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (19, 8, 'KL530', 'LHR', 'AMS', '2024-06-05', 371, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (20, 8, 'KL985', 'AMS', 'DXB', '2024-06-05', 5160, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (21, 4, 'LH643', 'NRT', 'FRA', '2024-06-05', 9350, NULL, 'cancelled');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (22, 2, 'UA295', 'SFO', 'ORD', '2024-06-05', 2970, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (23, 5, 'AF215', 'JFK', 'CDG', '2024-06-06', 5837, 120, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (24, 6, 'EK540', 'DXB', 'FRA', '2024-06-06', 4840, 15, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (25, 7, 'JL924', 'NRT', 'AMS', '2024-06-06', 9320, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (26, 4, 'LH328', 'FRA', 'CDG', '2024-06-06', 448, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (27, 2, 'UA682', 'SFO', 'ORD', '2024-06-06', 2970, 95, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (28, 4, 'LH49', 'DXB', 'FRA', '2024-06-07', 4840, 25, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (29, 1, 'DL838', 'LAX', 'ORD', '2024-06-08', 2807, 180, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (30, 6, 'EK569', 'DXB', 'NRT', '2024-06-08', 7950, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (31, 7, 'JL227', 'NRT', 'FRA', '2024-06-08', 9350, 20, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (32, 4, 'LH35', 'FRA', 'NRT', '2024-06-08', 9350, 20, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (33, 4, 'LH887', 'FRA', 'ORD', '2024-06-08', 6970, 35, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (34, 6, 'EK590', 'JFK', 'DXB', '2024-06-09', 11020, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (35, 8, 'KL983', 'AMS', 'DXB', '2024-06-09', 5160, 40, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (36, 2, 'UA34', 'ORD', 'LHR', '2024-06-09', 6340, 0, 'on time');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (37, 3, 'BA162', 'ORD', 'LHR', '2024-06-10', 6340, 40, 'delayed');
INSERT INTO flights (flight_id, airline_id, flight_number, origin, destination, departure_date, distance_km, delay_minutes, status) VALUES (38, 2, 'UA241', 'ORD', 'LHR', '2024-06-10', 6340, 0, 'on time');
